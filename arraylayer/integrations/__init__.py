"""Integrations of ``arraylayer.Array`` with other libraries, each loaded only when its library
is imported (see ``arraylayer.array._register_when_imported``): arraylayer never imports them."""
