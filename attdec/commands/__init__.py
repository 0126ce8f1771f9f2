"""One module per CLI command; attdec.cli registers them."""
