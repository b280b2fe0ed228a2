"""The chapters' figures and tables, read from the committed results in data/."""
