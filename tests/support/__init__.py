"""The test library: builders of synthetic inputs (SQTT streams, ui_output folders, .rgp files) and the headless
browser driver, imported by the tests and by tools/ as `tests.support`."""
