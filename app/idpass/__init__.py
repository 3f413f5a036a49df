"""IDPass: a remote identity verification the person completes on their own phone at a hosted link (consent,
documents photographed and validated, selfie, liveness), reviewed in the portal and certified in a PDF."""
