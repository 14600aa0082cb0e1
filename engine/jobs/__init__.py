"""Jobs: what the daemon does on a schedule (manifests, the scheduler and its run log), the morning note,
the alert when status turns red, and the user service that keeps the daemon running."""
