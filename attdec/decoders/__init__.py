"""Raw SQTT decoders: bytes of one shader engine's stream in, waves and occupancy records out."""
