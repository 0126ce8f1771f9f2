"""Generated ISA tables (facts, not code): see tools/makers/gen_isa_tables.py and tools/oracles/probe_isa.py."""
