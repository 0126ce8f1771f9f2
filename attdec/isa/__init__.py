"""AMDGPU code objects (ELF, metadata, DWARF lines) and a table-driven instruction decoder."""
