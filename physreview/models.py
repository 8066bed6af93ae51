"""The site package has no models of its own (the login throttle's cache table is made by migration 0002)."""
