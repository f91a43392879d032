"""Storing models: model folders saved and loaded (``model_io``, int8 storage in ``int8``) and the catalogue of
shipped models by name (``catalogue``)."""
