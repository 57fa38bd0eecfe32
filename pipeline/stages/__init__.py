"""One module per curation stage; each holds its config model and its datatrove step."""
