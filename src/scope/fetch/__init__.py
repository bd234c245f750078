"""What the analysis needs, fetched from the store: a layer above both, so analysis stays a
function of values (issue 56)."""
