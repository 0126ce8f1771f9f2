"""Input readers: each turns one kind of input (ui_output folder, raw rocprofv3 output, tinygrad profile) into Dispatches."""
