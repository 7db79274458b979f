"""Ghost and repost signals of the canonical postings and the employer behind agency and hidden postings: the
signals step (:mod:`.step`) and its SQL (:mod:`.store`)."""
