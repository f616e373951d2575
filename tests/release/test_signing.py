"""Signed reports (output.sign, reportgen/release/signing.py) and their check by `reportgen verify`.

A throw-away CA and signer certificate are made here with `cryptography` (the PKCS#12 files live in tmp_path; no
key is in the repository). One small spec is run once with output.sign; the signed PDF is then checked with
pyHanko's own validator (the test CA as trust root), with pypdf (attachments, PDF/A identification) and with
`reportgen verify`, before and after tampering. Every misconfiguration of output.sign is a spec problem: exit 2,
its message, nothing written. The password is never printed.
"""

import datetime as dt
import io
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyhanko")

from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

PASSWORD = "pw-Never-Printed-7f3a9c"
ENV = "REPORTGEN_SIGN_PASSWORD"
SIGNER_CN = "Jane Auditor"
NOW = dt.datetime.now(dt.timezone.utc)


# --------------------------------------------------------------------------- a throw-away PKI


def _name(cn):
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Example Audit LLP"),
                      x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _usage(*, sign=True, ca=False):
    return x509.KeyUsage(digital_signature=sign, content_commitment=sign, key_encipherment=not sign and not ca,
                         data_encipherment=False, key_agreement=False, key_cert_sign=ca, crl_sign=ca,
                         encipher_only=False, decipher_only=False)


def _ca(cn):
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(_name(cn)).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(NOW - dt.timedelta(days=1)).not_valid_after(NOW + dt.timedelta(days=365))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_usage(sign=False, ca=True), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
            .sign(key, hashes.SHA256()))
    return key, cert


def _leaf(ca_key, ca_cert, *, sign=True, before=None, after=None, key=None):
    key = key or rsa.generate_private_key(public_exponent=65537, key_size=2048)
    cert = (x509.CertificateBuilder().subject_name(_name(SIGNER_CN)).issuer_name(ca_cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(before or NOW - dt.timedelta(days=1))
            .not_valid_after(after or NOW + dt.timedelta(days=90))
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(_usage(sign=sign), critical=True)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False)
            .sign(ca_key, hashes.SHA256()))
    return key, cert


def _p12(path, key, cert, chain, password=PASSWORD):
    enc = serialization.BestAvailableEncryption(password.encode()) if password else serialization.NoEncryption()
    path.write_bytes(pkcs12.serialize_key_and_certificates(b"signer", key, cert, chain, enc))
    return path


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    d = tmp_path_factory.mktemp("pki")
    ca_key, ca = _ca("Example Test Root CA")
    key, cert = _leaf(ca_key, ca)
    (d / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    _, other_ca = _ca("Some Other Root CA")
    (d / "other-ca.pem").write_bytes(other_ca.public_bytes(serialization.Encoding.PEM))
    _p12(d / "auditor.p12", key, cert, [ca])
    # misconfigurations
    (d / "certs-only.p12").write_bytes(pkcs12.serialize_key_and_certificates(
        None, None, None, [cert, ca], serialization.BestAvailableEncryption(PASSWORD.encode())))
    _p12(d / "no-sign-usage.p12", *_leaf(ca_key, ca, sign=False), [ca])
    _p12(d / "expired.p12", *_leaf(ca_key, ca, before=NOW - dt.timedelta(days=400),
                                  after=NOW - dt.timedelta(days=30)), [ca])
    (d / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                  serialization.NoEncryption()))
    (d / "garbage.p12").write_bytes(os.urandom(900))
    return {"dir": d, "ca": ca, "key": key, "cert": cert}


# --------------------------------------------------------------------------- a small signed run


SPEC = """\
version: 1
report:
  title: Signed audit
  model: {{name: tiny-screener, version: "1.0"}}
data:
  test: test.csv
attributes:
  group: {{column: g, groups: [a, b]}}
tasks:
  hired: {{column: y, predicted: p, positive: 1}}
metrics:
  - name: demographic_parity
    protected: a
    reference: b
intervals:
  bootstrap: {{resamples: 50, seed: 0}}
output:
  formats: [html, pdf, json]
{sign}"""

SIGN = """\
  sign:
    pkcs12: {pkcs12}
    password_env: {env}
    reason: NYC Local Law 144 bias audit
    location: New York, NY
    name: Jane Auditor
"""


def _workspace(d: Path, pkcs12_rel="keys/auditor.p12", env=ENV, sign=None) -> Path:
    import random

    rnd = random.Random(0)
    rows = ["g,y,p"]
    for _ in range(400):
        y = rnd.randint(0, 1)
        rows.append(f"{rnd.choice('ab')},{y},{y if rnd.random() < 0.8 else 1 - y}")
    (d / "test.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    spec = d / "spec.yaml"
    spec.write_text(SPEC.format(sign=SIGN.format(pkcs12=pkcs12_rel, env=env) if sign is None else sign),
                    encoding="utf-8")
    return spec


def cli(*args, env=None, cwd=None):
    full = {k: v for k, v in os.environ.items() if k != ENV}
    full.update(env or {})
    return subprocess.run([sys.executable, "-m", "reportgen", *map(str, args)], capture_output=True, text=True,
                          env=full, cwd=cwd)


def cli_in_process(*args, env=None):
    """The CLI in-process (click's CliRunner: the same entry point and exit codes as `cli`, without a Python start
    per call), with the environment `cli` would give the subprocess: ENV unset unless ``env`` sets it. An exception
    the CLI does not turn into an exit code is raised (a subprocess would exit 1 with it). `verify` and the runs
    without a password use it; the signed run keeps a subprocess (the password reaches a fresh process only
    through its environment)."""
    from click.testing import CliRunner

    from reportgen.cli import main

    r = CliRunner(env={ENV: None, **(env or {})}).invoke(main, [str(a) for a in args], catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def assert_no_secret(*texts):
    for t in texts:
        t = t if isinstance(t, str) else t.decode("latin-1")
        assert PASSWORD not in t


@pytest.fixture(scope="module")
def signed(tmp_path_factory, pki):
    d = tmp_path_factory.mktemp("signed")
    (d / "keys").mkdir()
    shutil.copy(pki["dir"] / "auditor.p12", d / "keys" / "auditor.p12")
    spec = _workspace(d)
    r = cli("run", spec, "--out", d / "out", env={ENV: PASSWORD})
    assert r.returncode == 0, r.stderr
    assert_no_secret(r.stdout, r.stderr)
    return {"dir": d, "spec": spec, "out": d / "out", "pdf": d / "out" / "report.pdf", "run": r}


# --------------------------------------------------------------------------- the signature, read by pyHanko


def _validate(data: bytes, roots):
    from pyhanko.pdf_utils.reader import PdfFileReader
    from pyhanko.sign.validation import validate_pdf_signature
    from pyhanko_certvalidator import ValidationContext
    from asn1crypto import x509 as a_x509

    reader = PdfFileReader(io.BytesIO(data))
    sigs = reader.embedded_signatures
    assert len(sigs) == 1
    vc = ValidationContext(trust_roots=[a_x509.Certificate.load(c.public_bytes(serialization.Encoding.DER))
                                        for c in roots])
    return sigs[0], validate_pdf_signature(sigs[0], vc)


def test_signed_pdf_validates_with_pyhanko_against_the_test_ca(signed, pki):
    from pyhanko.sign.validation.status import SignatureCoverageLevel

    data = signed["pdf"].read_bytes()
    sig, status = _validate(data, [pki["ca"]])
    assert status.intact and status.valid and status.trusted and status.bottom_line, status.pretty_print_details()
    assert status.coverage == SignatureCoverageLevel.ENTIRE_FILE
    br = [int(x) for x in sig.sig_object["/ByteRange"]]
    assert br[0] == 0 and br[2] + br[3] == len(data)  # everything but the signature value
    assert sig.field_name == "reportgen-signature"
    assert str(sig.sig_object["/SubFilter"]) == "/ETSI.CAdES.detached"  # PAdES
    assert str(sig.sig_object["/Reason"]) == "NYC Local Law 144 bias audit"
    assert str(sig.sig_object["/Location"]) == "New York, NY"
    assert str(sig.sig_object["/Name"]) == "Jane Auditor"
    assert status.signing_cert.subject.native["common_name"] == SIGNER_CN
    assert abs((status.signer_reported_dt - dt.datetime.now(dt.timezone.utc)).total_seconds()) < 600
    # the chain is embedded: the CA certificate travels inside the signature
    embedded = {c.chosen.subject.native["common_name"] for c in sig.signed_data["certificates"]}
    assert embedded == {SIGNER_CN, "Example Test Root CA"}
    # the private key is not in the file (the public modulus is, in the certificate)
    d = pki["key"].private_numbers().d
    assert d.to_bytes((d.bit_length() + 7) // 8, "big") not in data
    assert_no_secret(data, (signed["out"] / "report.html").read_bytes(), (signed["out"] / "results.json").read_bytes())


def test_signed_pdf_keeps_attachments_and_pdfa_identification(signed):
    from pypdf import PdfReader

    data = signed["pdf"].read_bytes()
    reader = PdfReader(io.BytesIO(data))
    assert len(reader.pages) >= 1 and reader.pages[0].extract_text().strip()
    att = reader.attachments
    assert att["results.json"] == [(signed["out"] / "results.json").read_bytes()]
    assert att["spec.yaml"] == [signed["spec"].read_bytes()]
    import importlib.metadata

    versions = json.loads((signed["out"] / "results.json").read_bytes())["versions"]
    assert versions["pyhanko"] == importlib.metadata.version("pyhanko")  # what signed the PDF is recorded
    xmp = reader.trailer["/Root"]["/Metadata"].get_object().get_data().decode("utf-8")
    assert re.search(r'pdfaid:part(="|>)3', xmp) and re.search(r'pdfaid:conformance(="|>)B', xmp), xmp
    # PDF/A: the information dictionary and the XMP name the same producer after the signing update
    producer = re.search(r'pdf:Producer(?:="([^"]*)"|>([^<]*)<)', xmp)
    assert producer and str(reader.trailer["/Info"]["/Producer"]) == (producer[1] or producer[2])
    # the signature is an incremental update: the rendered PDF (one %%EOF) comes first, unchanged
    assert data.count(b"%%EOF") == 2


# --------------------------------------------------------------------------- reportgen verify


def test_verify_passes_on_the_signed_pdf_and_folder_and_names_the_signer(signed, pki):
    for target in (signed["pdf"], signed["out"]):
        r = cli_in_process("verify", target)
        assert r.returncode == 0, r.stdout + r.stderr
        line = next(ln for ln in r.stdout.splitlines() if ln.startswith("OK      signature:"))
        assert f"CN={SIGNER_CN}" in line and "signing time" in line and "no trusted timestamp" in line
        assert "covers the whole file except the signature value itself" in line
        assert "NOT confirmed: no trust root was given" in line
        assert_no_secret(r.stdout, r.stderr)
    r = cli_in_process("verify", signed["out"], "--trust", pki["dir"] / "ca.pem")
    assert r.returncode == 0, r.stdout
    assert "the certificate chain leads to the trusted root CN=Example Test Root CA,O=Example Audit LLP" in r.stdout
    r = cli_in_process("verify", signed["pdf"], "--trust", pki["dir"] / "other-ca.pem")
    assert r.returncode == 1, r.stdout
    assert "does not lead to a root given with --trust" in r.stdout and "who signed it is not confirmed" in r.stdout


def test_verify_api_reports_the_signer(signed):
    from reportgen.release.archive import verify

    rep = verify(signed["pdf"], require_signature=True)
    found = [f for f in rep.findings if f.check == "signature"]
    assert rep.ok and len(found) == 1 and found[0].status == "ok"
    assert found[0].actual == f"CN={SIGNER_CN},O=Example Audit LLP"


def _flip(data: bytes, i: int) -> bytes:
    b = bytearray(data)
    b[i] ^= 0x01
    return bytes(b)


def test_any_changed_byte_fails_verify(signed, tmp_path):
    data = signed["pdf"].read_bytes()
    br = [int(x) for x in re.search(rb"/ByteRange \[\s*(\d+) (\d+) (\d+) (\d+)", data).groups()]
    offsets = {"start": 20, "middle of the rendered PDF": br[1] // 2, "inside the signature value": br[1] + 200,
               "signing update": br[2] + 100, "last bytes": len(data) - 10}
    for what, i in offsets.items():
        bad = tmp_path / "report.pdf"
        bad.write_bytes(_flip(data, i))
        r = cli_in_process("verify", bad)
        assert r.returncode == 1, (what, r.stdout, r.stderr)
        assert re.search(r"^PROBLEM signature: report.pdf: ", r.stdout, re.M), (what, r.stdout)
        assert "NOT INTACT" in r.stdout


def test_an_appended_update_that_edits_a_page_fails_verify(signed, tmp_path):
    from pyhanko.pdf_utils import generic
    from pyhanko.pdf_utils.incremental_writer import IncrementalPdfFileWriter

    data = signed["pdf"].read_bytes()
    w = IncrementalPdfFileWriter(io.BytesIO(data))
    page = w.root["/Pages"]["/Kids"][0].get_object()
    page["/Rotate"] = generic.NumberObject(90)
    w.update_container(page)
    buf = io.BytesIO()
    w.write(buf)
    edited = buf.getvalue()
    assert edited.startswith(data) and len(edited) > len(data)
    out = tmp_path / "out"
    shutil.copytree(signed["out"], out)
    (out / "report.pdf").write_bytes(edited)
    for target in (out / "report.pdf", out):
        r = cli_in_process("verify", target)
        assert r.returncode == 1, r.stdout
        assert (f"{len(edited) - len(data):,} bytes were appended after the signed part" in r.stdout), r.stdout
    # pyHanko agrees: the signature no longer covers the whole file
    from pyhanko.sign.validation.status import SignatureCoverageLevel

    assert _validate(edited, [])[1].coverage == SignatureCoverageLevel.ENTIRE_REVISION


def test_unsigned_pdf_is_reported_as_unsigned(tmp_path):
    spec = _workspace(tmp_path, sign="")
    r = cli_in_process("run", spec, "--out", tmp_path / "out", "--format", "pdf,json")
    assert r.returncode == 0, r.stderr
    r = cli_in_process("verify", tmp_path / "out" / "report.pdf")
    assert r.returncode == 0 and "OK      signature: report.pdf: not signed" in r.stdout, r.stdout
    r = cli_in_process("verify", tmp_path / "out", "--require-signature")
    assert r.returncode == 1 and "PROBLEM signature: report.pdf: not signed, and a signature is required" in r.stdout


def test_verify_refuses_a_trust_file_without_a_certificate(signed, pki):
    r = cli_in_process("verify", signed["pdf"], "--trust", pki["dir"] / "key.pem")
    assert r.returncode == 2 and "holds no X.509 certificate" in r.stderr, r.stderr
    r = cli_in_process("verify", signed["pdf"], "--trust", pki["dir"] / "missing.pem")
    assert r.returncode == 2 and "cannot read it" in r.stderr, r.stderr


# --------------------------------------------------------------------------- misconfigurations: exit 2, nothing written


CASES = {
    "missing file": dict(pkcs12="keys/nope.p12", at="output.sign.pkcs12",
                         msg="PKCS#12 file 'keys/nope.p12' not found (resolved to "),
    "env unset": dict(env={}, at="output.sign.password_env",
                      msg=f"environment variable {ENV} is not set, and it must hold the password of "
                          "'keys/auditor.p12'; set it before running"),
    "wrong password": dict(env={ENV: "not-the-password"}, at="output.sign.password_env",
                           msg=f"the password in {ENV} does not open 'keys/auditor.p12' (wrong password"),
    "not PKCS#12 (PEM key)": dict(file="key.pem", at="output.sign.pkcs12",
                                  msg="'keys/auditor.p12' is not a PKCS#12 file (.p12 or .pfx) (it is PEM text); "
                                      "export the signer's key"),
    "not PKCS#12 (garbage)": dict(file="garbage.p12", at="output.sign.pkcs12",
                                  msg="'keys/auditor.p12' is not a PKCS#12 file (.p12 or .pfx); export"),
    "no private key": dict(file="certs-only.p12", at="output.sign.pkcs12",
                           msg="'keys/auditor.p12' holds certificates but no private key, so nothing can sign"),
    "key usage forbids signing": dict(file="no-sign-usage.p12", at="output.sign.pkcs12",
                                      msg="does not allow signing (its key usage has neither digitalSignature nor "
                                          "nonRepudiation)"),
    "expired certificate": dict(file="expired.p12", at="output.sign.pkcs12", msg=") expired on "),
}


@pytest.mark.parametrize("case", list(CASES))
def test_misconfigured_signing_is_a_spec_problem_and_writes_nothing(case, pki, tmp_path, signed):
    c = CASES[case]
    (tmp_path / "keys").mkdir()
    shutil.copy(pki["dir"] / c.get("file", "auditor.p12"), tmp_path / "keys" / "auditor.p12")
    spec = _workspace(tmp_path, pkcs12_rel=c.get("pkcs12", "keys/auditor.p12"))
    out = tmp_path / "out"
    shutil.copytree(signed["out"], out)  # a previous report: left exactly as it was
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    env = c.get("env", {ENV: PASSWORD})
    for args in (("run", spec, "--out", out), ("validate", spec)):
        r = cli_in_process(*args, env=env)
        assert r.returncode == 2, (case, r.stdout, r.stderr)
        line = next((ln for ln in r.stderr.splitlines() if c["msg"] in ln), None)
        assert line is not None, (case, r.stderr)
        assert re.match(rf"^{re.escape(str(spec))}:\d+:\d+: {re.escape(c['at'])}: .+; .+", line), line
        assert_no_secret(r.stdout, r.stderr)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    fresh = tmp_path / "fresh"
    assert cli_in_process("run", spec, "--out", fresh, env=env).returncode == 2 and not fresh.exists()


def test_every_signing_problem_is_reported_at_once(tmp_path):
    spec = _workspace(tmp_path, pkcs12_rel="keys/missing.p12", env="MY_SIGNING_PW")
    r = cli_in_process("run", spec, "--out", tmp_path / "out")
    assert r.returncode == 2
    assert "output.sign.pkcs12: PKCS#12 file 'keys/missing.p12' not found" in r.stderr
    assert "output.sign.password_env: environment variable MY_SIGNING_PW is not set" in r.stderr
    assert "2 problems found; nothing was written." in r.stderr
    assert not (tmp_path / "out").exists()


def test_password_env_must_name_a_variable(tmp_path):
    spec = _workspace(tmp_path, sign=SIGN.format(pkcs12="keys/auditor.p12", env='"my password!"'))
    r = cli_in_process("validate", spec)
    assert r.returncode == 2
    assert "output.sign.password_env: password_env names an environment variable" in r.stderr, r.stderr
    assert "my password!" not in r.stderr


def test_unknown_sign_key_and_missing_pkcs12_are_refused(tmp_path):
    spec = _workspace(tmp_path, sign="  sign:\n    pkcs_12: keys/auditor.p12\n")
    r = cli_in_process("validate", spec)
    assert r.returncode == 2
    assert "output.sign.pkcs_12: unknown key 'pkcs_12' (did you mean 'pkcs12'?)" in r.stderr, r.stderr
    assert "output.sign.pkcs12: required key 'pkcs12' is missing; add it" in r.stderr


def test_signing_failure_at_render_time_raises_a_spec_error(signed, monkeypatch):
    """The key checked at validation can be gone when the PDF is signed: the run stops before writing."""
    from reportgen import api
    from reportgen.spec.errors import SpecError

    monkeypatch.setenv(ENV, PASSWORD)
    ls = api.load(signed["spec"])
    results = json.loads((signed["out"] / "results.json").read_bytes())
    monkeypatch.setenv(ENV, "wrong")
    with pytest.raises(SpecError) as e:
        api.output_files(ls, ["pdf"], results)
    assert "does not open 'keys/auditor.p12'" in e.value.render() and PASSWORD not in e.value.render()
