"""The pieces of ``bench/bench_tables.py``: the load (``driver``), the stack it runs
against (``stack``), what it prints and writes (``report``) and py-spy (``profile``)."""
