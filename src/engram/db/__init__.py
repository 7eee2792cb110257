"""Shared database plumbing: connections, pragmas and named migrations."""
