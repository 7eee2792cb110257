"""Memory stores: the MemoryStore contract (``base``) and its backends, chosen by name in ``registry``."""
