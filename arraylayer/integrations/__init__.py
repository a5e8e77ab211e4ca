"""Integrations of ``arraylayer.Array`` with other libraries, each module imported only right
after its library is (see ``arraylayer.backends.first_use``): arraylayer never imports them."""
