"""The Run Durable Object: one per flow run; it drives the run's nodes and projects them to D1.

Import the parts from their modules (``run.host``, ``run.settings``): the definition imports ``run.settings``
and the host imports the definition.
"""
