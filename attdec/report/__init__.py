"""Reporters: rich tables, JSON/CSV, and writers of other formats."""
