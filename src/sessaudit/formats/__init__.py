"""The built-in formats: one package per source system, each a plugin (its `plugin.PLUGIN`, registered under
the `sessaudit.formats` entry points) behind the interface in sessaudit.plugin. No format imports another,
and the core imports none (docs/architecture.md)."""
