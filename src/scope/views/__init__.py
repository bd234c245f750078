"""Views render the typed model of a run and the facts derived from it; they compute nothing
and import no other view, only the shared formatting in fmt."""
