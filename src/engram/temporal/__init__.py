"""Time in engram: instants users type, the time a memory's content names, and the phrases of a
query ("last week", "in March") read as ranges, offline and deterministic given a clock and a zone."""
