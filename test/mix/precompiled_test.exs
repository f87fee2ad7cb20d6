defmodule RustyJson.PrecompiledTest do
  # The install path of precompiled NIFs (mix/precompiled.exs, used by the project's Mix compiler): picking the
  # artifact, fetching it from a directory or a loopback HTTP server, the cache, and the checksum check. The
  # artifact is made from the library this build installed, archived as scripts/precompile archives it.
  use ExUnit.Case, async: false

  Code.require_file("../../mix/precompiled.exs", __DIR__)
  alias RustyJson.Precompiled

  @moduletag :tmp_dir

  setup %{tmp_dir: tmp} do
    library = File.read!(Path.join(:code.priv_dir(:rusty_json), "native/rustyjson_nif.so"))
    target = Precompiled.target()
    nif = List.to_string(:erlang.system_info(:nif_version))
    name = Precompiled.artifact_name("9.9.9", nif, target)
    served = Path.join(tmp, "served")
    File.mkdir_p!(served)
    path = Path.join(served, name)

    :ok =
      :erl_tar.create(String.to_charlist(path), [{~c"librustyjson_nif.so", library}], [
        :compressed
      ])

    archive = File.read!(path)
    sha = :crypto.hash(:sha256, archive) |> Base.encode16(case: :lower)

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
    path = Path.join(ctx.served, ctx.name)
    <<head::binary-size(100), byte, rest::binary>> = File.read!(path)
    File.write!(path, <<head::binary, Bitwise.bxor(byte, 1), rest::binary>>)
    actual = :crypto.hash(:sha256, File.read!(path)) |> Base.encode16(case: :lower)

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
    # Mix (Elixir 1.15+) keeps only the project's applications in the code path.
    if function_exported?(Mix, :ensure_application!, 1),
      do: apply(Mix, :ensure_application!, [:inets])

    {:ok, _} = Application.ensure_all_started(:inets)

    # Through apply/3: inets is not among the project's applications, which Elixir 1.15+ checks calls against.
    config = [
      port: 0,
      server_name: ~c"rusty_json_test",
      server_root: String.to_charlist(ctx.tmp_dir),
      document_root: String.to_charlist(ctx.served),
      bind_address: {127, 0, 0, 1}
    ]

    {:ok, pid} = apply(:inets, :start, [:httpd, config])
    port = apply(:httpd, :info, [pid])[:port]
    base = "http://127.0.0.1:#{port}"

    try do
      assert Precompiled.install(ctx.name, ctx.sha, base, ctx.cache, ctx.dest) == :ok
      assert File.read!(ctx.dest) == ctx.library

      assert {:error, message} = Precompiled.fetch(base, "missing.tar.gz")
      assert message =~ "HTTP 404"
    after
      apply(:inets, :stop, [:httpd, pid])
    end

    # The cache answers with the server gone; an artifact not cached is a clear error.
    assert Precompiled.install(ctx.name, ctx.sha, base, ctx.cache, ctx.dest) == :ok
    assert {:error, message} = Precompiled.fetch(base, "other.tar.gz")
    assert message =~ "127.0.0.1:#{port}/other.tar.gz"
  end
end
