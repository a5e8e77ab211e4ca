"""The built-in backend adapters, one module each: numpy, jax, torch, tensorflow.

Importing an adapter module never imports its framework; :meth:`Backend.load` does.
"""
