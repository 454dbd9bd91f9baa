"""Leaf utilities every room may use: errors, safe file writes, the command's name, signals."""
