"""Trust: who may decide and how a decision proves it.

SSH signatures (sshsig), the signer lists, decision signatures and the approval policy
in force for a mission. Imports only `store.format`.
"""
