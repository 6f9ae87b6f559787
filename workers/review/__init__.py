"""Pull-request review: diff model, finding sources, selection, publishing, feedback."""
