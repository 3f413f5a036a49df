"""Events: raised from a completed entity check's new or changed alerts, reviewed by analysts (status, notes,
bulk updates), with the status history and the memory of dismissed alerts."""
