"""nli-stability's Hydra launchers. Hydra instantiates launchers only from the `hydra_plugins`
namespace, so the classes live here; what they add is in `stability.sweep`."""
