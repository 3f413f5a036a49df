"""Notes: what people write about an entity (and an event), with revisions, soft delete and the rules of who may
edit, delete or restore them (`rules.py`)."""
