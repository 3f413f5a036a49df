"""The hosted IDPass flow: the pages a person opens from the link on their phone. No account; the link's token
is the only key."""
