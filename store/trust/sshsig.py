"""SSH signatures in OpenSSH's SSHSIG format (`ssh-keygen -Y sign` / `-Y verify`).

The format is OpenSSH's PROTOCOL.sshsig: the armored blob (`-----BEGIN SSH
SIGNATURE-----`, base64 in lines of 70) holds the magic `SSHSIG`, version 1, the
signer's public key, the namespace, a reserved string, the hash algorithm and the
signature (the reserved string must be empty: ssh-keygen ignores it, this refuses it);
what is signed is the magic, the namespace, the reserved string, the hash
algorithm and the hash of the message. Messages are hashed with sha512 here (as
ssh-keygen does); sha256 is accepted when verifying. Keys, signing and checking a
signature are asyncssh's: a key file (`KeySigner`) or a key held by ssh-agent
(`AgentSigner`: the private key never leaves the agent). Nothing here reads a file.
asyncssh is imported when a key is first loaded, not with this module: most state
directories hold no signature, and it costs a tenth of a second at every start.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, cast

if TYPE_CHECKING:
    import asyncssh
    from asyncssh.agent import SSHAgentKeyPair

MAGIC = b"SSHSIG"
VERSION = 1
BEGIN = "-----BEGIN SSH SIGNATURE-----"
END = "-----END SSH SIGNATURE-----"
HASHES = {"sha512": hashlib.sha512, "sha256": hashlib.sha256}
RSA_ALGORITHM = b"rsa-sha2-512"
REFUSED_ALGORITHMS = frozenset({b"ssh-rsa"})
"""SHA-1 RSA signatures, which ssh-keygen refuses in SSHSIG too."""
MAX_ARMOR = 64 * 1024
MISMATCH = "the signature does not match the payload (edited after signing?)"


class SigError(ValueError):
    """A signature that cannot be made, read or trusted; the message says why."""


@dataclass(frozen=True, slots=True)
class Parsed:
    """An SSHSIG blob, unpacked (nothing checked but its shape)."""

    key: asyncssh.SSHKey
    namespace: str
    hash_algorithm: str
    signature: bytes

    @property
    def fingerprint(self) -> str:
        """`SHA256:...`, as `ssh-keygen -l` prints it."""
        return str(self.key.get_fingerprint("sha256"))


def _string(value: bytes) -> bytes:
    return struct.pack(">I", len(value)) + value


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def take(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise SigError("the signature is truncated")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def uint32(self) -> int:
        value: int = struct.unpack(">I", self.take(4))[0]
        return value

    def string(self) -> bytes:
        return self.take(self.uint32())


def signed_data(namespace: str, message: bytes, hash_algorithm: str = "sha512") -> bytes:
    """What the key signs: the magic, namespace, reserved, hash name and H(message)."""
    digest = HASHES[hash_algorithm](message).digest()
    parts = (namespace.encode(), b"", hash_algorithm.encode(), digest)
    return MAGIC + b"".join(_string(part) for part in parts)


def armor(key: asyncssh.SSHKey, namespace: str, signature: bytes) -> str:
    """The armored SSHSIG text of `signature` (SSH-encoded, with its algorithm)."""
    blob = (
        MAGIC
        + struct.pack(">I", VERSION)
        + b"".join(
            _string(part)
            for part in (key.public_data, namespace.encode(), b"", b"sha512", signature)
        )
    )
    text = base64.b64encode(blob).decode()
    lines = [text[i : i + 70] for i in range(0, len(text), 70)]
    return "\n".join([BEGIN, *lines, END]) + "\n"


def parse(text: str) -> Parsed:
    """Unpack an armored SSHSIG signature; SigError says what is wrong with it."""
    if len(text) > MAX_ARMOR:
        raise SigError(f"the signature is over {MAX_ARMOR} characters")
    lines = [line.strip() for line in text.strip().splitlines()]
    if len(lines) < 3 or lines[0] != BEGIN or lines[-1] != END:
        raise SigError(f"not an SSH signature (it must start {BEGIN} and end {END})")
    try:
        blob = base64.b64decode("".join(lines[1:-1]), validate=True)
    except (binascii.Error, ValueError):
        raise SigError("the signature is not base64") from None
    reader = _Reader(blob)
    if reader.take(6) != MAGIC:
        raise SigError("the signature does not start with SSHSIG")
    version = reader.uint32()
    if version != VERSION:
        raise SigError(f"SSHSIG version {version} is not supported (only {VERSION})")
    public, namespace, reserved, hash_name, signature = (reader.string() for _ in range(5))
    if reserved:
        raise SigError("the signature's reserved field is not empty")
    if reader.at != len(blob):
        raise SigError("the signature has bytes after its end")
    import asyncssh
    from asyncssh.public_key import decode_ssh_public_key

    try:
        key = decode_ssh_public_key(public)
    except (asyncssh.KeyImportError, ValueError) as exc:
        raise SigError(f"the signer's public key does not load: {exc}") from None
    try:
        return Parsed(key, namespace.decode(), hash_name.decode(), signature)
    except UnicodeDecodeError:
        raise SigError("the namespace or hash name is not text") from None


def verify(parsed: Parsed, message: bytes, namespace: str) -> None:
    """Check that `parsed` signs `message` in `namespace`; SigError when it does not."""
    if parsed.namespace != namespace:
        raise SigError(f"namespace {parsed.namespace!r}, not {namespace!r}")
    if parsed.hash_algorithm not in HASHES:
        raise SigError(f"hash algorithm {parsed.hash_algorithm!r} is not sha512 or sha256")
    algorithm = _Reader(parsed.signature).string() if len(parsed.signature) >= 4 else b""
    if algorithm in REFUSED_ALGORITHMS:
        raise SigError("an ssh-rsa (SHA-1) signature is refused: sign with rsa-sha2-512")
    data = signed_data(namespace, message, parsed.hash_algorithm)
    if not parsed.key.verify(data, parsed.signature):
        raise SigError(MISMATCH)


def _algorithm(key: asyncssh.SSHKey) -> bytes:
    """The signature algorithm for `key`: rsa-sha2-512 for RSA, else the key's own."""
    algorithms = tuple(key.sig_algorithms)
    return RSA_ALGORITHM if RSA_ALGORITHM in algorithms else algorithms[0]


class Signer(Protocol):
    """Signs a message as SSHSIG in a namespace; `identity` names the key for messages."""

    identity: str

    async def sign(self, message: bytes, namespace: str) -> str: ...


class KeySigner:
    """Signs with a private key already loaded (from a file: `store.trust.sshsig.load_signer`)."""

    def __init__(self, key: asyncssh.SSHKey) -> None:
        self.key = key
        self.identity = str(key.get_fingerprint("sha256"))

    async def sign(self, message: bytes, namespace: str) -> str:
        data = signed_data(namespace, message)
        return armor(self.key, namespace, self.key.sign(data, _algorithm(self.key)))


class AgentSigner:
    """Signs with the agent's key whose public half is `public` (SSH_AUTH_SOCK, or
    `agent_path`); the private key stays in the agent."""

    def __init__(self, public: asyncssh.SSHKey, agent_path: str = "") -> None:
        self.public = public
        self.agent_path = agent_path
        self.identity = str(public.get_fingerprint("sha256"))

    async def sign(self, message: bytes, namespace: str) -> str:
        import asyncssh

        try:
            async with asyncssh.connect_agent(self.agent_path) as agent:
                keys = cast("Sequence[SSHAgentKeyPair]", await agent.get_keys())
                held = next((k for k in keys if k.public_data == self.public.public_data), None)
                if held is None:
                    raise SigError(f"ssh-agent does not hold the key {self.identity} (ssh-add it)")
                if RSA_ALGORITHM in self.public.sig_algorithms:
                    held.set_sig_algorithm(RSA_ALGORITHM)
                signature = await held.sign_async(signed_data(namespace, message))
        except (OSError, ValueError, asyncssh.Error) as exc:
            if isinstance(exc, SigError):
                raise
            raise SigError(f"ssh-agent could not sign: {exc}") from None
        return armor(self.public, namespace, signature)


def load_signer(data: bytes, agent_path: str = "") -> KeySigner | AgentSigner:
    """The signer for a key file's bytes: an unencrypted private key signs itself; a
    public key (a `.pub`), or an encrypted private key, signs through ssh-agent with the
    key's public half (`ssh-add` it first)."""
    import asyncssh

    try:
        return KeySigner(asyncssh.import_private_key(data))
    except asyncssh.KeyImportError:
        pass
    try:
        return AgentSigner(asyncssh.import_public_key(data), agent_path)
    except asyncssh.KeyImportError:
        raise SigError("not an OpenSSH private or public key") from None
