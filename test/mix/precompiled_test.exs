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

    assert ctx.target in [
             "x86_64-unknown-linux-gnu",
             "aarch64-unknown-linux-gnu",
             "armv7-unknown-linux-gnueabihf",
             "riscv64gc-unknown-linux-gnu"
           ]
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

    # The cache answers with the server gone (the library removed, so the stamp does not); an artifact not
    # cached is a clear error.
    File.rm!(ctx.dest)
    assert Precompiled.install(ctx.name, ctx.sha, base, ctx.cache, ctx.dest) == :ok
    assert {:error, message} = Precompiled.fetch(base, "other.tar.gz")
    assert message =~ base <> "/other.tar.gz"
  end

  test "installed once, a second install asks neither the cache nor the URL; a damaged library or another checksum installs again",
       ctx do
    assert Precompiled.install(ctx.name, ctx.sha, ctx.served, ctx.cache, ctx.dest) == :ok
    stamp = File.read!(Precompiled.stamp_path(ctx.dest))
    assert stamp =~ "archive #{ctx.name}\n"
    assert stamp =~ "archive_sha256 #{ctx.sha}\n"
    assert Precompiled.installed?(ctx.dest, ctx.name, ctx.sha)

    # Neither source left: only the stamp can answer.
    File.rm_rf!(ctx.served)
    File.rm_rf!(ctx.cache)
    assert Precompiled.install(ctx.name, ctx.sha, ctx.served, ctx.cache, ctx.dest) == :noop
    assert File.read!(ctx.dest) == ctx.library
    refute File.exists?(ctx.cache)

    # A checksum file naming the same archive with another SHA-256 is not what the stamp records.
    other_sha = String.duplicate("0", 64)
    refute Precompiled.installed?(ctx.dest, ctx.name, other_sha)

    assert {:error, message} =
             Precompiled.install(ctx.name, other_sha, ctx.served, ctx.cache, ctx.dest)

    assert message =~ Path.join(ctx.served, ctx.name)

    # The library damaged since: installed again (from the served archive, then the stamp holds again).
    File.write!(ctx.dest, "damaged")
    refute Precompiled.installed?(ctx.dest, ctx.name, ctx.sha)
    assert {:error, _} = Precompiled.install(ctx.name, ctx.sha, ctx.served, ctx.cache, ctx.dest)

    {library, sha} = TestArtifact.archive!(ctx.served, ctx.name)
    assert library == ctx.library

    assert Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest) == :ok
    assert File.read!(ctx.dest) == library
    assert Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest) == :noop

    # A library built with cargo drops the stamp: no later install takes it for the precompiled one.
    :ok = Precompiled.remove_stamp(ctx.dest)
    refute Precompiled.installed?(ctx.dest, ctx.name, sha)
  end

  test "a malformed checksum file raises one Mix.Error naming the file and what is wrong", ctx do
    path = Path.join(ctx.tmp_dir, Precompiled.checksum_file())
    hex = String.duplicate("ab", 32)

    cases = [
      {~s(%{"a.tar.gz" => 1}\n), ~s(the entry "a.tar.gz" => 1 is not a string => string pair)},
      {~s(%{a: "sha256:#{hex}"}\n), "the entry :a => "},
      {~s(%{"a.tar.gz" => "sha256:" <> "#{hex}"}\n), "is not a string => string pair"},
      {"", "it is empty"},
      {"  \n", "it is empty"},
      {
        ~s(%{\n  "a.tar.gz" => "sha256:#{hex}",\n),
        # The line named is the end (Elixir 1.14) or the opening brace's (1.18).
        ~r/syntax error on line [13]: missing terminator: }/
      },
      {~s(["a.tar.gz"]\n),
       ~s(it should be a map of archive names to "sha256:<hex>", not ["a.tar.gz"])},
      {~s(%{"a.tar.gz" => "sha256:abc"}\n), ~s("sha256:abc", not "sha256:" and 64 hex digits)},
      {~s(%{"a.tar.gz" => "sha256:#{hex}", "a.tar.gz" => "sha256:#{hex}"}\n),
       ~s("a.tar.gz" is listed twice)},
      {<<"%{", 0xFF, "}">>, "it is not UTF-8 text"}
    ]

    for {text, what} <- cases do
      File.write!(path, text)
      error = assert_raise Mix.Error, fn -> Precompiled.read_checksums(path) end

      assert error.message =~
               "the checksum file #{Precompiled.checksum_file()} (#{path}) is malformed: "

      assert error.message =~ what, "#{inspect(text)}: #{error.message}"
    end

    File.rm!(path)
    File.mkdir!(path)
    error = assert_raise Mix.Error, fn -> Precompiled.read_checksums(path) end
    assert error.message =~ "(#{path}) is malformed: it cannot be read: "

    # Well formed, and missing.
    File.rmdir!(path)
    File.write!(path, ~s(%{\n  "a.tar.gz" => "sha256:#{hex}",\n  "b.tar.gz" => "#{hex}"\n}\n))
    assert Precompiled.read_checksums(path) == %{"a.tar.gz" => "sha256:#{hex}", "b.tar.gz" => hex}
    assert Precompiled.read_checksums(Path.join(ctx.tmp_dir, "none.exs")) == %{}
  end

  test "an archive that unpacks to more than the cap is refused before it is all inflated; only the library is extracted",
       ctx do
    # Padding ahead of the library, as the 1 GB file of the report was: 4 MiB of zeros (a few KB compressed).
    sha =
      TestArtifact.archive_entries!(ctx.served, ctx.name, [
        {"padding", :binary.copy(<<0>>, 4 * 1024 * 1024)},
        {"librustyjson_nif.so", ctx.library}
      ])

    cap = byte_size(ctx.library) + 1024 * 1024

    assert {:error, message} =
             Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest,
               max_unpacked_bytes: cap
             )

    assert message ==
             "#{ctx.name} unpacks to more than #{cap} bytes, the most a precompiled NIF archive may hold"

    refute File.exists?(ctx.dest)

    # Under the default cap (64 MiB) the same archive installs: its library alone lands.
    assert Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest) == :ok
    assert File.read!(ctx.dest) == ctx.library

    assert File.ls!(Path.dirname(ctx.dest)) |> Enum.sort() == [
             "rustyjson_nif.so",
             "rustyjson_nif.so.stamp"
           ]
  end

  test "an archive whose library is not a shared object for its target is refused, naming the archive",
       ctx do
    foreign = TestArtifact.foreign_machine()
    <<0x7F, "ELF", class, _::binary>> = ctx.library

    cases = [
      {TestArtifact.patch(ctx.library, 18, <<foreign::little-16>>),
       "it is built for ELF machine #{foreign} ("},
      {TestArtifact.patch(ctx.library, 16, <<2::little-16>>),
       "its ELF type is 2, not a shared object's (ET_DYN, 3)"},
      # The other ELF class than the library's (a 64-bit library made 32-bit, or a 32-bit one 64-bit).
      {TestArtifact.patch(ctx.library, 4, <<3 - class>>),
       "not a #{32 * class}-bit little-endian ELF file (class #{3 - class}, data encoding 1)"},
      {binary_part(ctx.library, 0, 12), "its ELF header is cut short"},
      {"#!/bin/sh\necho not a library\n", ~s[it is not an ELF file (it begins "#!/bin/s")]},
      {"", ~s[it is not an ELF file (it begins "")]}
    ]

    for {library, what} <- cases do
      sha =
        TestArtifact.archive_entries!(ctx.served, ctx.name, [{"librustyjson_nif.so", library}])

      File.rm_rf!(ctx.cache)

      assert {:error, message} =
               Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest)

      assert message =~
               "#{ctx.name} holds a librustyjson_nif.so that is not a shared object for its target: "

      assert message =~ what
      refute File.exists?(ctx.dest)
    end

    sha = TestArtifact.archive_entries!(ctx.served, ctx.name, [{"README", "no library here"}])
    File.rm_rf!(ctx.cache)

    assert Precompiled.install(ctx.name, sha, ctx.served, ctx.cache, ctx.dest) ==
             {:error, "#{ctx.name} holds no librustyjson_nif.so"}
  end

  test "a Windows archive: its DLL installed, named either as ours (rustyjson_nif.dll) or as rustler_precompiled's",
       ctx do
    target = "x86_64-pc-windows-gnu"
    name = Precompiled.artifact_name("9.9.9", "2.16", target)
    dll = TestArtifact.library_for(target)
    dest = Path.join(ctx.tmp_dir, "priv/native/rustyjson_nif.dll")

    for inner <- ["rustyjson_nif.dll", String.replace_suffix(name, ".tar.gz", "")] do
      sha = TestArtifact.archive_entries!(ctx.served, name, [{inner, dll}])
      File.rm_rf!(ctx.cache)
      File.rm_rf!(Path.dirname(dest))
      assert Precompiled.install(name, sha, ctx.served, ctx.cache, dest) == :ok
      assert File.read!(dest) == dll
      assert File.read!(Precompiled.stamp_path(dest)) =~ "\ntarget #{target}\narchive #{name}\n"
    end

    # A Linux library in a Windows archive is refused.
    sha = TestArtifact.archive_entries!(ctx.served, name, [{"rustyjson_nif.dll", ctx.library}])
    File.rm_rf!(ctx.cache)

    assert {:error, message} = Precompiled.install(name, sha, ctx.served, ctx.cache, dest)

    assert message =~
             "#{name} holds a rustyjson_nif.dll that is not a shared object for its target: it is not a PE file"
  end
end
