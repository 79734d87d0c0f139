"""The format: what the files of a state directory are and how they are read.

Records (the pydantic models), the layout (which path is what), confined reads through
directory descriptors, loading within the format's caps, durable writes, problems, agent
text made visible and the plain overview row. Imports nothing else of the store.
"""
