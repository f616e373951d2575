"""Signed reports: a PAdES signature on report.pdf (``output.sign``) and its check in ``reportgen verify``.

Signing
-------
With ``output.sign`` in the spec, every report.pdf reportgen writes is signed before it is written: the key and
its certificate chain come from a PKCS#12 file named in the spec, its password from the environment variable the
spec names (never from the spec). The signature is a PAdES baseline (B-B) signature made with pyHanko: a CMS
signature (``/SubFilter /ETSI.CAdES.detached``) in an invisible signature field, appended to the rendered PDF as
an incremental update, so the PDF/A-3b file and its attachments (spec.yaml, results.json) are kept byte for byte
and the signature covers everything before it. The signer's certificate and the chain certificates in the
PKCS#12 file are embedded in the signature. Nothing is fetched from the network: there is no timestamp
authority, so the signing time in the signature is the time of the signing computer's clock, as the signer
declares it, not a trusted timestamp.

PDF/A keeps the document information dictionary and the XMP metadata in step. pyHanko rewrites the XMP producer
to its own name when it appends the signature, so the information dictionary's ``/Producer`` is set to the same
text in that update (the modification dates of both are set to the signing time by pyHanko).

Every problem with the key is a spec problem found when the spec is validated (:func:`spec_problems`), before
anything is computed: the file missing or unreadable, the environment variable unset, a wrong password, a file
that is not PKCS#12, a key that cannot sign (no key or no certificate in the file, a certificate of another key,
a key type that cannot sign, a certificate whose key usage forbids signing or that is not valid now). No message
ever contains the password or key material.

Checking
--------
:func:`check_signatures` is what ``reportgen verify`` asks of a PDF: the signatures present, and for each that it
is cryptographically intact (the digest of the signed bytes matches, the signature value verifies with the
certificate's key) and that the last one covers the whole file except the signature value itself (a byte
changed anywhere or an update appended after signing fails). It names the signer (the certificate's subject) and
the declared signing time. Without trust roots it cannot say that the signer is who the certificate claims:
anyone can make a certificate with any name. With trust roots (``--trust ROOT.pem``) the certificate chain is
validated against them, as of the declared signing time, without revocation checks (nothing is fetched).
"""

from __future__ import annotations

import asyncio
import contextlib
import concurrent.futures
import datetime as dt
import hashlib
import io
import re
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable

from reportgen.spec.errors import Problem, SpecError

MAX_PKCS12_BYTES = 1_000_000  # a PKCS#12 key file is a few kilobytes
_SIGN_USAGES = ("digital_signature", "content_commitment")  # content_commitment is non-repudiation
_EXPORT_HINT = ("export the signer's key and certificate chain as PKCS#12, e.g. `openssl pkcs12 -export -inkey "
                "key.pem -in cert.pem -certfile chain.pem -out auditor.p12`")


# --------------------------------------------------------------------------- the key


@dataclass
class Credentials:
    """A PKCS#12 file that opened with its password, and the signer's certificate in it. The key material and the
    password stay in private fields that no message and no repr shows."""

    source: str  # the file as the spec names it
    subject: str  # the signer certificate's subject (RFC 4514)
    _pkcs12: bytes = field(repr=False)
    _password: bytes | None = field(repr=False)


def _is_pkcs12(data: bytes) -> bool:
    """Whether ``data`` is a DER PKCS#12 (PFX) structure, whatever its password."""
    from asn1crypto import pkcs12 as a_pkcs12

    try:
        pfx = a_pkcs12.Pfx.load(data, strict=True)
        return pfx["version"].native == "v3" and pfx["auth_safe"]["content_type"].native in ("data", "signed_data")
    except Exception:  # noqa: BLE001 - anything that does not parse is not PKCS#12
        return False


def _subject(cert: Any) -> str:
    return cert.subject.rfc4514_string() or "(empty subject)"


def _spki(key: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def _key_problems(key: Any, cert: Any, chain: list, shown: str, now: dt.datetime) -> list[str]:
    """Why this key and certificate cannot sign (empty: they can)."""
    from cryptography import x509
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

    if key is None and cert is None and not chain:
        return [f"'{shown}' holds neither a private key nor a certificate; {_EXPORT_HINT}"]
    if key is None:
        return [f"'{shown}' holds certificates but no private key, so nothing can sign with it; {_EXPORT_HINT}"]
    if cert is None:
        return [f"'{shown}' holds a private key but not its certificate, which the signature must name; "
                f"{_EXPORT_HINT}"]
    out = []
    if not isinstance(key, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey, ed25519.Ed25519PrivateKey,
                            ed448.Ed448PrivateKey)):
        out.append(f"the key in '{shown}' is a {type(key).__name__.removeprefix('_')} key, which cannot make a PDF "
                   "signature; use an RSA, EC (ECDSA) or Ed25519 key")
    elif _spki(key.public_key()) != _spki(cert.public_key()):
        out.append(f"the certificate in '{shown}' ({_subject(cert)}) is for another key than the private key in the "
                   f"file; {_EXPORT_HINT} (the certificate issued for that key)")
    try:
        usage = cert.extensions.get_extension_for_class(x509.KeyUsage).value
    except x509.ExtensionNotFound:
        usage = None
    if usage is not None and not any(getattr(usage, u) for u in _SIGN_USAGES):
        out.append(f"the certificate in '{shown}' ({_subject(cert)}) does not allow signing (its key usage has "
                   "neither digitalSignature nor nonRepudiation); use a certificate issued for signing documents")
    if now < cert.not_valid_before_utc:
        out.append(f"the certificate in '{shown}' ({_subject(cert)}) is not valid before "
                   f"{cert.not_valid_before_utc:%Y-%m-%d %H:%M} UTC; sign from then on or use a valid certificate")
    elif now > cert.not_valid_after_utc:
        out.append(f"the certificate in '{shown}' ({_subject(cert)}) expired on "
                   f"{cert.not_valid_after_utc:%Y-%m-%d %H:%M} UTC; renew it and export the new one")
    return out


def load_credentials(ls: Any, *, now: dt.datetime | None = None) -> tuple[Credentials | None, list[Problem]]:
    """Open the PKCS#12 file that ``output.sign`` names with the password from its environment variable.
    Returns (the credentials, []) or (None, every problem found, at the spec's keys)."""
    from cryptography.hazmat.primitives.serialization import pkcs12

    sg = ls.spec.output.sign
    at_file, at_env = ("output", "sign", "pkcs12"), ("output", "sign", "password_env")
    problems: list[Problem] = []
    password = os.environ.get(sg.password_env)
    if password is None:
        problems.append(ls.rule(at_env, f"environment variable {sg.password_env} is not set, and it must hold the "
                                f"password of '{sg.pkcs12}'; set it before running (an empty value for a "
                                "file without a password), or name another variable in "
                                "output.sign.password_env",
                                (at_env,)))
    path = ls.resolve(sg.pkcs12)
    if not path.is_file():
        what = "is a folder, not a file" if path.is_dir() else "not found"
        problems.append(ls.rule(at_file, f"PKCS#12 file '{sg.pkcs12}' {what} (resolved to {path}); paths are "
                                "relative to the spec file",
                                (at_file,)))
        return None, problems
    try:
        size = path.stat().st_size
        data = b"" if size > MAX_PKCS12_BYTES else path.read_bytes()
    except OSError as e:
        problems.append(ls.rule(at_file, f"cannot read PKCS#12 file '{sg.pkcs12}' ({e.strerror or e}); make it "
                                "readable by the user running reportgen",
                                (at_file,)))
        return None, problems
    if size > MAX_PKCS12_BYTES:
        problems.append(ls.rule(at_file, f"'{sg.pkcs12}' is {size:,} bytes, far more than a PKCS#12 key file; "
                                "name the .p12 or .pfx file that holds the signing key",
                                (at_file,)))
        return None, problems
    if not _is_pkcs12(data):
        pem = " (it is PEM text)" if data.lstrip().startswith(b"-----BEGIN") else ""
        problems.append(ls.rule(at_file, f"'{sg.pkcs12}' is not a PKCS#12 file (.p12 or .pfx){pem}; "
                                f"{_EXPORT_HINT}",
                                (at_file,)))
        return None, problems
    if password is None:
        return None, problems
    tries = [None, b""] if password == "" else [password.encode("utf-8")]
    loaded = None
    for pw in tries:
        try:
            loaded = pkcs12.load_key_and_certificates(data, pw)
            break
        except (ValueError, TypeError):
            continue
    if loaded is None:
        problems.append(ls.rule(at_env, f"the password in {sg.password_env} does not open '{sg.pkcs12}' (wrong "
                                "password, or an encryption OpenSSL no longer reads, such as RC2-40); set "
                                "the variable to this file's password, or re-export the file with AES",
                                (at_env, at_file)))
        return None, problems
    key, cert, chain = loaded
    for message in _key_problems(key, cert, chain, sg.pkcs12, now or dt.datetime.now(dt.timezone.utc)):
        problems.append(ls.rule(at_file, message,
                                (at_file,)))
    if problems:
        return None, problems
    return Credentials(sg.pkcs12, _subject(cert), data, pw), []


def spec_problems(ls: Any) -> list[Problem]:
    """Validation-time check of ``output.sign``: the key opens and can sign (every problem, at its key)."""
    if ls.spec is None or ls.spec.output.sign is None:
        return []
    return load_credentials(ls)[1]


# --------------------------------------------------------------------------- signing


def _blocking(fn: Callable[[], Any]) -> Any:
    """Run ``fn`` (which runs its own event loop, as pyHanko's synchronous API does) also when the caller is
    inside a running event loop (a notebook): then in a worker thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return fn()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(fn).result()


@contextlib.contextmanager
def _quiet_pyhanko():
    """pyHanko logs every untrusted chain with a traceback; the findings say it once, in words."""
    loggers = [logging.getLogger(n) for n in ("pyhanko", "pyhanko_certvalidator", "pyhanko.sign")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def sign_pdf(pdf: bytes, ls: Any) -> bytes:
    """``pdf`` with a PAdES signature appended as an incremental update (the input bytes are its prefix), signed
    with the key ``output.sign`` names. Raises SpecError when the key cannot be used (the same problems as at
    validation: the environment or the file changed since)."""
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter
    from pyhanko.pdf_utils.metadata.model import VENDOR
    from pyhanko.sign import signers
    from pyhanko.sign.fields import SigSeedSubFilter

    creds, problems = load_credentials(ls)
    if problems:
        raise SpecError(problems)
    sg = ls.spec.output.sign

    def run() -> bytes:
        signer = signers.SimpleSigner.load_pkcs12_data(creds._pkcs12, [], passphrase=creds._password)
        meta = signers.PdfSignatureMetadata(field_name=sg.field_name, reason=sg.reason, location=sg.location,
                                            name=sg.name, subfilter=SigSeedSubFilter.PADES)
        writer = IncrementalPdfFileWriter(io.BytesIO(pdf))
        info = writer.trailer.raw_get("/Info") if "/Info" in writer.trailer else None
        if isinstance(info, generic.IndirectObject):  # PDF/A: the info dictionary says what the XMP says
            info.get_object()["/Producer"] = generic.TextStringObject(VENDOR)
            writer.mark_update(info)
        out = io.BytesIO()
        signers.PdfSigner(meta, signer).sign_pdf(writer, output=out)
        return out.getvalue()

    with _quiet_pyhanko():
        signed = _blocking(run)
    if not signed.startswith(pdf):  # an incremental update only appends
        raise RuntimeError("pyHanko rewrote the PDF instead of appending the signature")
    return signed


# --------------------------------------------------------------------------- checking


def load_trust_roots(paths: Iterable[str | os.PathLike]) -> list[Any]:
    """The certificates in PEM or DER files (asn1crypto certificates). Raises ValueError naming the file that is
    unreadable or holds no certificate."""
    from asn1crypto import pem, x509 as a_x509

    roots = []
    for p in paths:
        try:
            data = Path(p).read_bytes()
        except OSError as e:
            raise ValueError(f"--trust {p}: cannot read it ({e.strerror or e})") from None
        ders = [der for _, _, der in pem.unarmor(data, multiple=True)] if pem.detect(data) else [data]
        found = []
        for der in ders:
            try:
                cert = a_x509.Certificate.load(der, strict=True)
                cert.native  # parse it all now: a damaged certificate is refused here, not during validation
                found.append(cert)
            except Exception:  # noqa: BLE001 - not a certificate (a key, a CSR, garbage)
                continue
        if not found:
            raise ValueError(f"--trust {p}: holds no X.509 certificate; give the root certificate (PEM or DER) "
                             "you trust")
        roots += found
    return roots


def _when(t: dt.datetime | None) -> str:
    if t is None:
        return "none declared"
    return t.astimezone(dt.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


def _cert_words(cert: Any) -> tuple[str, str]:
    """(subject, SHA-256 fingerprint) of an asn1crypto certificate."""
    from cryptography import x509

    der = cert.dump()
    return _subject(x509.load_der_x509_certificate(der)), hashlib.sha256(der).hexdigest()


def _root_words(status: Any) -> str:
    """The subject of the trust root a validated chain ends in."""
    anchor = getattr(getattr(status, "validation_path", None), "trust_anchor", None)
    cert = getattr(anchor, "certificate", None)
    if cert is not None:
        return _cert_words(cert)[0]
    return anchor.authority.name.human_friendly if anchor is not None else "given with --trust"


def _trust_words(status: Any) -> str:
    indic = getattr(status, "trust_problem_indic", None)
    return indic.name.lower().replace("_", " ") if indic is not None else "no path to a trusted root"


@dataclass(frozen=True)
class SignatureFinding:
    """One outcome of :func:`check_signatures`: status "ok" or "problem", the message, and the details a
    verify finding records."""

    status: str
    message: str
    field: str | None = None
    expected: str | None = None
    actual: str | None = None


_FIRST_EOF = re.compile(rb"startxref[\x00\t\n\f\r ]+\d+[\x00\t\n\f\r ]+%%EOF")


def _unsigned_tail_problem(data: bytes, revisions: int) -> str | None:
    """Why an unsigned PDF is not the single revision reportgen (WeasyPrint) writes; None when it is.

    WeasyPrint writes one revision: the body, one cross-reference section, ``startxref``, ``%%EOF``. Anything
    after that first end-of-file marker (an incremental update painting "ALL GATES PASSED" over page 1, a
    replaced attachment, or bytes a reader ignores) means the file is not as written. Both the parsed number
    of revisions and the byte position of the first ``startxref N %%EOF`` are checked, so neither a chained
    update (``/Prev``) nor an appended stand-alone one passes."""
    if revisions > 1:
        return f"it has {revisions} revisions (incremental updates were appended after it was written)"
    m = _FIRST_EOF.search(data)
    if m is None:
        return "it has no end-of-file marker (startxref ... %%EOF)"
    tail = len(data) - m.end()
    if data[m.end():].strip(b"\x00\t\n\f\r ") != b"":
        return f"{tail:,} bytes follow its first end-of-file marker (something was appended after it was written)"
    return None


def check_signatures(data: bytes, label: str, *, trust_roots: list | None = None,
                     require: bool = False) -> list[SignatureFinding]:
    """What ``reportgen verify`` reports about the signatures of a PDF (``label`` names it in the messages)."""
    with _quiet_pyhanko():
        return _blocking(lambda: _check(data, label, trust_roots, require))


def _check(data: bytes, label: str, trust_roots: list | None, require: bool) -> list[SignatureFinding]:
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko.sign.validation.settings import KeyUsageConstraints
    from pyhanko.sign.validation.status import SignatureCoverageLevel
    from pyhanko_certvalidator import ValidationContext

    try:
        reader = PdfFileReader(io.BytesIO(data), strict=False)
        sigs = reader.embedded_regular_signatures
    except Exception as e:  # noqa: BLE001 - a damaged file is a finding
        return [SignatureFinding("problem", f"{label}: cannot read the PDF's signatures ({type(e).__name__}: {e}); "
                                            "the file is damaged or was altered")]
    if not sigs:
        altered = _unsigned_tail_problem(data, reader.xrefs.total_revisions)
        if altered:
            return [SignatureFinding("problem", f"{label}: not intact: {altered}; an unsigned report is one "
                                                "revision ending at its first %%EOF, as reportgen writes it "
                                                "(regenerate the report, or sign reports with output.sign)",
                                     field="%%EOF", expected="1 revision", actual=altered)]
        if require:
            return [SignatureFinding("problem", f"{label}: not signed, and a signature is required "
                                                "(--require-signature); reports are signed when their spec has "
                                                "output.sign")]
        return [SignatureFinding("ok", f"{label}: not signed (no PDF signature; reports are signed when their spec "
                                       "has output.sign): only the checks above vouch for it")]
    usage = KeyUsageConstraints(key_usage={"digital_signature", "non_repudiation"}, match_all_key_usages=False)
    out: list[SignatureFinding] = []
    for i, sig in enumerate(sigs):
        name = str(sig.field_name)
        where = f"{label}: signature '{name}'"
        last = i == len(sigs) - 1
        try:
            status = validate_pdf_signature(sig, ValidationContext(trust_roots=[]), key_usage_settings=usage,
                                            skip_diff=True)
        except Exception as e:  # noqa: BLE001 - a damaged or forged signature is a finding
            out.append(SignatureFinding("problem", f"{where}: cannot be checked ({type(e).__name__}: {e}); the "
                                                   "signature is damaged or was altered", field=name))
            continue
        subject, fingerprint = _cert_words(status.signing_cert)
        when = status.signer_reported_dt
        signer = f"signer {subject} (certificate SHA-256 {fingerprint})"
        if not status.intact:
            out.append(SignatureFinding("problem", f"{where}: the signed bytes were changed after signing (their "
                                                   f"digest differs from the one {signer} signed)", field=name))
            continue
        if not status.valid:
            out.append(SignatureFinding("problem", f"{where}: the signature value does not verify with the key of "
                                                   f"the certificate it names ({subject}): damaged or forged",
                                        field=name))
            continue
        br = [int(x) for x in sig.byte_range]
        covered = br[2] + br[3] if len(br) == 4 else 0
        full = status.coverage == SignatureCoverageLevel.ENTIRE_FILE
        if not full and (last or status.coverage < SignatureCoverageLevel.ENTIRE_REVISION):
            if covered and covered < len(data):
                text = (f"{len(data) - covered:,} bytes were appended after the signed part (an incremental update "
                        "made after signing, which can change pages or attachments); the signature covers only the "
                        f"first {covered:,} bytes")
            else:
                text = f"the signature's /ByteRange {br} does not cover the whole file except the signature itself"
            out.append(SignatureFinding("problem", f"{where}: {text}", field=name, expected=str(len(data)),
                                        actual=str(covered)))
            continue
        scope = ("covers the whole file except the signature value itself" if full
                 else "covers its revision (a later signature covers the rest)")
        base = (f"{where}: {signer}, signing time {_when(when)} as the signer declares it (no trusted timestamp); "
                f"the signature {scope} and is cryptographically intact")
        if not trust_roots:
            out.append(SignatureFinding("ok", f"{base}. Who signed is NOT confirmed: no trust root was given, and "
                                              "anyone can make a certificate with any name (pass --trust ROOT.pem "
                                              "to check the certificate chain)", field=name, actual=subject))
            continue
        vc = ValidationContext(trust_roots=trust_roots, allow_fetching=False, moment=when, revocation_mode="soft-fail")
        try:
            trusted = validate_pdf_signature(sig, vc, key_usage_settings=usage, skip_diff=True)
        except Exception as e:  # noqa: BLE001
            trusted, err = None, f"{type(e).__name__}: {e}"
        if trusted is not None and trusted.trusted:
            out.append(SignatureFinding("ok", f"{base}; the certificate chain leads to the trusted root "
                                              f"{_root_words(trusted)} (as of the declared signing time; revocation "
                                              "not checked)", field=name, actual=subject))
        else:
            why = _trust_words(trusted) if trusted is not None else err
            out.append(SignatureFinding("problem", f"{where}: the certificate of {subject} does not lead to a root "
                                                   f"given with --trust ({why}); the file is unaltered since signing, "
                                                   "but who signed it is not confirmed", field=name, actual=subject))
    return out
