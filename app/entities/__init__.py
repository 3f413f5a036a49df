"""Entities: the people, businesses, vessels and properties a program screens, with their CSV import, archive
(one-way in the API, announced to the domains whose rows go with it) and soft delete."""
