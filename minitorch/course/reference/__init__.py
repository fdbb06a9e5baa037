"""The reference solutions of the additive assignments, as plugins (`--plugin MODULE`)."""
