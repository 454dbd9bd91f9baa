"""Writing a spec: the Spec API, CHOOSE, and finding and importing a spec."""
