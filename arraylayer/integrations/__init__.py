"""Integrations of ``arraylayer.Array`` with other libraries, each module imported only right
after its library is (see ``arraylayer.backends.first_use``): arraylayer never imports them.

The folder ``arraylayer/integrations/`` owns what arraylayer registers with other libraries (JAX
pytrees, einops).

May import: the base modules, ``array``, the face ``arraylayer``.
"""
