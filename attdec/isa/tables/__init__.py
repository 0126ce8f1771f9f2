"""Generated ISA tables (facts, not code): see tools/gen_isa_tables.py and tools/probe_isa.py."""
