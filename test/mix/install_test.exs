defmodule RustyJson.InstallTest do
  # `mix compile` of a copy of this project as a user's machine runs it: with no cargo on PATH (nor in
  # ~/.cargo/bin), its NIF comes from a loopback HTTP server serving the library this build installed, archived
  # as scripts/precompile archives it and listed in the copy's checksum file. Each test compiles its own copy in
  # a child `mix` (the copy's native/ is this checkout's, so a fallback build with cargo finds it built).
  use ExUnit.Case, async: false

  Code.require_file("../../mix/precompiled.exs", __DIR__)
  Code.require_file("../support/child_project.exs", __DIR__)
  alias RustyJson.{ChildProject, Precompiled, TestArtifact}

  @moduletag :tmp_dir
  # A child VM compiling 15 modules, slower under emulation (arm64 roots).
  @moduletag timeout: 600_000

  @root Path.expand("../..", __DIR__)
  @version Mix.Project.config()[:version]

  setup %{tmp_dir: tmp} do
    project = ChildProject.copy!(tmp)

    # The artifact under the name `make precompile` gives this VM's target (NIF version 2.16, the crate's).
    name = Precompiled.artifact_name(@version, "2.16", Precompiled.target())
    served = Path.join(tmp, "served")
    {library, sha} = TestArtifact.archive!(served, name)
    log = Path.join(tmp, "requests.log")
    server = TestArtifact.serve!(served, log)
    on_exit(fn -> TestArtifact.stop(server) end)

    %{
      project: project,
      name: name,
      sha: sha,
      library: library,
      served: served,
      log: log,
      base_url: elem(server, 1),
      cache: Path.join(tmp, "cache"),
      installed: Path.join(project, "priv/native/rustyjson_nif.so"),
      no_cargo: ChildProject.no_cargo_env(tmp)
    }
  end

  test "with no cargo: downloaded, verified, installed and loaded; a second compile asks nothing",
       ctx do
    write_checksums(ctx, %{ctx.name => ctx.sha})

    assert {_, 0} = mix(ctx, ["compile"], ctx.no_cargo)
    assert TestArtifact.requests(ctx.log, ctx.name) == 1
    assert File.read!(ctx.installed) == ctx.library
    assert File.exists?(Path.join(ctx.cache, ctx.name))

    script =
      ~S|IO.write(RustyJson.encode!(%{"a" => [1, 2.5, "é"]}) <> " " <> inspect(RustyJson.decode!("[true]")))|

    assert {output, 0} = mix(ctx, ["run", "-e", script], ctx.no_cargo)
    assert String.ends_with?(output, ~s({"a":[1,2.5,"é"]} [true]))

    # The installed library gone, the next compile installs it again from the cache alone.
    File.rm_rf!(Path.join(ctx.project, "priv"))
    assert {_, 0} = mix(ctx, ["compile"], ctx.no_cargo)
    assert File.read!(ctx.installed) == ctx.library
    assert TestArtifact.requests(ctx.log, ctx.name) == 1
  end

  test "a tampered archive is refused, naming the file and both hashes; nothing is installed",
       ctx do
    actual = TestArtifact.tamper!(Path.join(ctx.served, ctx.name))
    write_checksums(ctx, %{ctx.name => ctx.sha})

    # Refused even where cargo could build: a mismatch is never papered over.
    for env <- [ctx.no_cargo, []] do
      assert {output, status} = mix(ctx, ["compile"], env)
      assert status != 0
      assert output =~ "#{ctx.base_url}/#{ctx.name} does not match the checksum file"
      assert output =~ "expected sha256:#{ctx.sha}"
      assert output =~ "got      sha256:#{actual}"
      refute File.exists?(ctx.installed)
      refute File.exists?(Path.join(ctx.cache, ctx.name))
    end
  end

  test "no artifact for this target: cargo builds it, and without cargo one error says what to do",
       ctx do
    write_checksums(ctx, %{
      Precompiled.artifact_name(@version, "2.16", "sparc-unknown-linux-gnu") => ctx.sha
    })

    assert {output, status} = mix(ctx, ["compile"], ctx.no_cargo)
    assert status != 0
    assert output =~ "no precompiled NIF is listed for this VM (target #{Precompiled.target()}"
    assert output =~ "NIF version #{:erlang.system_info(:nif_version)}"
    assert output =~ "Install Rust"
    refute File.exists?(ctx.installed)

    assert_cargo_builds(ctx)
    assert TestArtifact.requests(ctx.log, ".tar.gz") == 0
  end

  test "an artifact the server does not have (404): cargo builds it, or one error names the URL",
       ctx do
    File.rm!(Path.join(ctx.served, ctx.name))
    write_checksums(ctx, %{ctx.name => ctx.sha})

    assert {output, status} = mix(ctx, ["compile"], ctx.no_cargo)
    assert status != 0
    assert output =~ "could not get its precompiled NIF #{ctx.name}"
    assert output =~ "#{ctx.base_url}/#{ctx.name}: HTTP 404"
    assert output =~ "RUSTYJSON_PRECOMPILED_URL"
    assert output =~ "install Rust"
    refute File.exists?(ctx.installed)

    assert_cargo_builds(ctx)
  end

  test "the server down: one error names the URL (no cargo), after bounded retries", ctx do
    write_checksums(ctx, %{ctx.name => ctx.sha})
    down = closed_port_url()
    env = url_env(ctx.no_cargo, down)

    assert {output, status} = mix(ctx, ["compile"], env)
    assert status != 0
    assert output =~ "from #{down}: #{down}/#{ctx.name}: "
    assert output =~ "econnrefused"
    refute File.exists?(ctx.installed)
  end

  test "installed once, later compiles and runs do nothing: no request and no cache, even with the URL down",
       ctx do
    write_checksums(ctx, %{ctx.name => ctx.sha})
    assert {_, 0} = mix(ctx, ["compile"], ctx.no_cargo)
    assert TestArtifact.requests(ctx.log, ctx.name) == 1

    # The cache gone and the URL a closed port: the stamp beside the library answers alone.
    File.rm_rf!(ctx.cache)
    offline = url_env(ctx.no_cargo, closed_port_url())

    assert {_, 0} = mix(ctx, ["compile"], offline)
    script = ~S|IO.write(RustyJson.encode!(%{"ok" => true}))|
    assert {output, 0} = mix(ctx, ["run", "-e", script], offline)
    assert String.ends_with?(output, ~s({"ok":true}))
    assert TestArtifact.requests(ctx.log, ctx.name) == 1
    refute File.exists?(ctx.cache)
    assert File.read!(ctx.installed) == ctx.library

    # A damaged library is installed again: offline that fails, naming what it tried; online it is fetched.
    File.write!(ctx.installed, "damaged")
    assert {output, status} = mix(ctx, ["compile"], offline)
    assert status != 0
    assert output =~ "could not get its precompiled NIF #{ctx.name}"

    assert {_, 0} = mix(ctx, ["compile"], ctx.no_cargo)
    assert TestArtifact.requests(ctx.log, ctx.name) == 2
    assert File.read!(ctx.installed) == ctx.library
  end

  test "an archive whose library is not a shared object for this target: refused, naming it; cargo builds instead",
       ctx do
    foreign = TestArtifact.patch(ctx.library, 18, <<TestArtifact.foreign_machine()::little-16>>)
    sha = TestArtifact.archive_entries!(ctx.served, ctx.name, [{"librustyjson_nif.so", foreign}])
    write_checksums(ctx, %{ctx.name => sha})

    assert {output, status} = mix(ctx, ["compile"], ctx.no_cargo)
    assert status != 0
    assert output =~ "could not get its precompiled NIF #{ctx.name}"

    assert output =~
             "#{ctx.name} holds a librustyjson_nif.so that is not a shared object for its target"

    refute File.exists?(ctx.installed)

    if ChildProject.cargo_available?() do
      assert {output, 0} = mix(ctx, ["compile"], [])
      assert output =~ "not a shared object for its target: it is built for ELF machine"
      assert output =~ "building it with cargo instead"
      built = Path.join(@root, "native/target/release/librustyjson_nif.so")
      assert File.read!(ctx.installed) == File.read!(built)
      refute File.exists?(ctx.installed <> ".stamp")
    end
  end

  test "a malformed checksum file: one error naming it and what is wrong, even where cargo could build",
       ctx do
    File.write!(Path.join(ctx.project, Precompiled.checksum_file()), ~s(%{"#{ctx.name}" => 1}\n))

    for env <- [ctx.no_cargo, []] do
      assert {output, status} = mix(ctx, ["compile"], env)
      assert status != 0
      assert output =~ "the checksum file #{Precompiled.checksum_file()} ("

      assert output =~
               ~s(is malformed: the entry "#{ctx.name}" => 1 is not a string => string pair)

      refute output =~ "FunctionClauseError"
      refute File.exists?(ctx.installed)
    end
  end

  # Where this machine has cargo, the compile builds the NIF with it (the copy's native/ is this checkout's, built
  # already): installed, and it is the library cargo wrote.
  defp assert_cargo_builds(ctx) do
    if ChildProject.cargo_available?() do
      assert {_, 0} = mix(ctx, ["compile"], [])
      built = Path.join(@root, "native/target/release/librustyjson_nif.so")
      assert File.read!(ctx.installed) == File.read!(built)
    end
  end

  # A URL on a loopback port that was just free and has nothing listening.
  defp closed_port_url do
    {:ok, socket} = :gen_tcp.listen(0, ip: {127, 0, 0, 1})
    {:ok, port} = :inet.port(socket)
    :ok = :gen_tcp.close(socket)
    "http://127.0.0.1:#{port}"
  end

  defp url_env(env, url),
    do: List.keystore(env, "RUSTYJSON_PRECOMPILED_URL", 0, {"RUSTYJSON_PRECOMPILED_URL", url})

  defp write_checksums(ctx, checksums), do: ChildProject.write_checksums!(ctx.project, checksums)

  # A child `mix` in the copy (`ChildProject.mix/3`) with this test's server and cache; `env` is put over them.
  defp mix(ctx, args, env) do
    base = [{"RUSTYJSON_PRECOMPILED_URL", ctx.base_url}, {"RUSTYJSON_CACHE_DIR", ctx.cache}]
    ChildProject.mix(ctx.project, args, base ++ env)
  end
end
