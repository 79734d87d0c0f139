"""themes package."""
