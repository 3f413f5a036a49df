"""ID checks: a person's document details verified synchronously with the issuer's service (the Australian DVS,
the New Zealand DIA and NZTA, payroll and superannuation registers), through one provider interface with a
deterministic sandbox. Adhoc and entity-bound; consent recorded; document numbers never stored in clear."""
