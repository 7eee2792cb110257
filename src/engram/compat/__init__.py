"""Drop-in facades with other memory libraries' method names and result shapes."""
