"""Stage 6, release: pass/fail gates, comparing releases (diff), the archive and its hash chain."""
