"""Reading documents and faces: the passport and visa MRZ, other documents' fields by OCR, face matching and the
liveness challenge. Plain Python over images (no Flask, no database); models install with the packages."""
