"""The llama-server backend: the constrained call (whole-call grammar or in
pieces), its HTTP clients, slots, prefix snapshots, prefix ids and the chat
template rendered here."""
