"""Scripted bots for moska-p2p.

Each bot is a module in this package that can also be loaded by file path (for example from the
command line), so that players can write and share their own bots.
"""
