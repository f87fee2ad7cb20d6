defmodule RustyJson.PrecompiledTest do
  # The install path of precompiled NIFs (mix/precompiled.exs, used by the project's Mix compiler): picking the
  # artifact, fetching it from a directory or a loopback HTTP server, the cache, and the checksum check. The
  # artifact is made from the library this build installed, archived as scripts/precompile archives it.
  use ExUnit.Case, async: false

  Code.require_file("../../mix/precompiled.exs", __DIR__)
  alias RustyJson.{Precompiled, TestArtifact}

  @moduletag :tmp_dir

  setup %{tmp_dir: tmp} do
    target = Precompiled.target()
    nif = List.to_string(:erlang.system_info(:nif_version))
    name = Precompiled.artifact_name("9.9.9", nif, target)
    served = Path.join(tmp, "served")
    {library, sha} = TestArtifact.archive!(served, name)

    %{
      library: library,
      name: name,
      sha: sha,
      served: served,
      cache: Path.join(tmp, "cache"),
      dest: Path.join(tmp, "priv/native/rustyjson_nif.so"),
      target: target
    }
  end

  test "the artifact picked is the highest NIF version the VM loads, for its target", ctx do
    checksums = %{
      Precompiled.artifact_name("1.0.0", "2.16", ctx.target) => "sha256:AA",
      Precompiled.artifact_name("1.0.0", "2.15", ctx.target) => "sha256:bb",
      Precompiled.artifact_name("1.0.0", "99.0", ctx.target) => "sha256:cc",
      Precompiled.artifact_name("1.0.0", "2.14", "sparc-unknown-linux-gnu") => "sha256:dd",
      Precompiled.artifact_name("0.9.0", "2.16", ctx.target) => "sha256:ee"
    }

    # OTP 25 has NIF version 2.16, 26 and later 2.17: 2.16 is the highest one listed under 99.0.
    assert Precompiled.pick(checksums, "1.0.0", ctx.target) ==
             {Precompiled.artifact_name("1.0.0", "2.16", ctx.target), "aa"}

    assert Precompiled.pick(checksums, "1.0.0", "sparc-unknown-linux-gnu") ==
             {Precompiled.artifact_name("1.0.0", "2.14", "sparc-unknown-linux-gnu"), "dd"}

    assert Precompiled.pick(checksums, "1.0.0", "mips-unknown-linux-gnu") == nil
    assert Precompiled.pick(checksums, "2.0.0", ctx.target) == nil
    assert ctx.target in ["x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"]
  end

  test "installed from a directory, then from the cache alone", ctx do
    assert Precompiled.install(ctx.name, ctx.sha, ctx.served, ctx.cache, ctx.dest) == :ok
    assert File.read!(ctx.dest) == ctx.library
    assert File.exists?(Path.join(ctx.cache, ctx.name))

    File.rm!(ctx.dest)
    File.rm_rf!(ctx.served)
    assert Precompiled.install(ctx.name, ctx.sha, ctx.served, ctx.cache, ctx.dest) == :ok
    assert File.read!(ctx.dest) == ctx.library
  end

  test "a tampered archive is refused, naming the file and both hashes; nothing is installed",
       ctx do
    actual = TestArtifact.tamper!(Path.join(ctx.served, ctx.name))

    error =
      assert_raise Mix.Error, fn ->
        Precompiled.install(ctx.name, ctx.sha, "file://" <> ctx.served, ctx.cache, ctx.dest)
      end

    assert error.message =~ ctx.name
    assert error.message =~ "sha256:#{ctx.sha}"
    assert error.message =~ "sha256:#{actual}"
    refute File.exists?(ctx.dest)
    refute File.exists?(Path.join(ctx.cache, ctx.name))
  end

  test "over HTTP on loopback: served, cached, 404 and server down are errors", ctx do
    server = TestArtifact.serve!(ctx.served, Path.join(ctx.tmp_dir, "requests.log"))
    {_, base} = server

    try do
      assert Precompiled.install(ctx.name, ctx.sha, base, ctx.cache, ctx.dest) == :ok
      assert File.read!(ctx.dest) == ctx.library

      assert {:error, message} = Precompiled.fetch(base, "missing.tar.gz")
      assert message =~ "HTTP 404"
    after
      TestArtifact.stop(server)
    end

    # The cache answers with the server gone; an artifact not cached is a clear error.
    assert Precompiled.install(ctx.name, ctx.sha, base, ctx.cache, ctx.dest) == :ok
    assert {:error, message} = Precompiled.fetch(base, "other.tar.gz")
    assert message =~ base <> "/other.tar.gz"
  end
end
