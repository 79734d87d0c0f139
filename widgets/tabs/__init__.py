"""The mission screen's tab widgets, one module per tab: they render what views give them."""
