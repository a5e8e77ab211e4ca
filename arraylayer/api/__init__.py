"""The user-facing array functions, grouped as the Array API standard groups them."""
