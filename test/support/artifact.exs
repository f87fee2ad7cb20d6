defmodule RustyJson.TestArtifact do
  @moduledoc false
  # Precompiled-NIF artifacts for the install path's tests: an archive of the library this build installed, made
  # as scripts/precompile makes them, and a loopback HTTP server (OTP's inets httpd) that serves a directory and
  # logs each request.

  @doc "Writes the archive `name` in `dir` holding the installed NIF; returns `{library, sha256 hex}`."
  def archive!(dir, name) do
    library = installed_library()
    {library, archive_entries!(dir, name, [{"librustyjson_nif.so", library}])}
  end

  @doc "The NIF this build installed."
  def installed_library,
    do: File.read!(Path.join(:code.priv_dir(:rusty_json), "native/rustyjson_nif.so"))

  @doc "Writes the archive `name` in `dir` holding `entries` (`{path, bytes}`); returns its SHA-256 hex."
  def archive_entries!(dir, name, entries) do
    File.mkdir_p!(dir)
    path = Path.join(dir, name)
    entries = Enum.map(entries, fn {entry, bytes} -> {String.to_charlist(entry), bytes} end)
    :ok = :erl_tar.create(String.to_charlist(path), entries, [:compressed])
    :crypto.hash(:sha256, File.read!(path)) |> Base.encode16(case: :lower)
  end

  @doc "`binary` with the bytes from `offset` on replaced by `bytes` (an ELF header field, say)."
  def patch(binary, offset, bytes) do
    after_bytes = offset + byte_size(bytes)

    binary_part(binary, 0, offset) <>
      bytes <> binary_part(binary, after_bytes, byte_size(binary) - after_bytes)
  end

  @doc "The ELF machine (e_machine) of the other precompiled CPU than this VM's: 183 (aarch64) or 62 (x86_64)."
  def foreign_machine do
    if String.starts_with?(List.to_string(:erlang.system_info(:system_architecture)), "x86_64"),
      do: 183,
      else: 62
  end

  @doc """
  A stand-in library for `target` whose header is that target's (an ELF shared object of its class and machine, a
  Mach-O dylib, a PE DLL) and the rest filler naming it: the compiler's check reads headers only, and libraries
  for other machines cannot be built quickly here.
  """
  def library_for(target) do
    header =
      case target do
        "x86_64-unknown-linux-" <> _ -> elf(64, 62)
        "aarch64-unknown-linux-" <> _ -> elf(64, 183)
        "riscv64gc-unknown-linux-gnu" -> elf(64, 243)
        "arm" <> _ -> elf(32, 40)
        "aarch64-apple-darwin" -> macho(0x0100000C)
        "x86_64-apple-darwin" -> macho(0x01000007)
        "x86_64-pc-windows-" <> _ -> pe(0x8664, 0x2022)
      end

    header <> "stand-in library for #{target}\n"
  end

  # e_ident (class, little-endian, version 1), e_type ET_DYN, e_machine, e_version; the rest of the header zeros.
  defp elf(bits, machine) do
    size = if bits == 64, do: 64, else: 52

    head =
      <<0x7F, "ELF", div(bits, 32), 1, 1, 0::72, 3::little-16, machine::little-16, 1::little-32>>

    head <> :binary.copy(<<0>>, size - byte_size(head))
  end

  # MH_MAGIC_64, cputype, cpusubtype, filetype MH_DYLIB (6), then ncmds etc. as zeros.
  defp macho(cpu), do: <<0xFEEDFACF::little-32, cpu::little-32, 0::32, 6::little-32, 0::128>>

  # The DOS header with e_lfanew 0x40, then "PE\0\0" and the COFF header (machine, characteristics with the DLL bit).
  def pe(machine, characteristics) do
    dos = <<"MZ", 0::size(58)-unit(8), 0x40::little-32>>

    dos <>
      <<"PE", 0, 0, machine::little-16, 1::little-16, 0::96, 240::little-16,
        characteristics::little-16>>
  end

  @doc "Changes one byte of the archive at `path` (its 101st); returns the changed archive's SHA-256 hex."
  def tamper!(path) do
    <<head::binary-size(100), byte, rest::binary>> = File.read!(path)
    File.write!(path, <<head::binary, Bitwise.bxor(byte, 1), rest::binary>>)
    :crypto.hash(:sha256, File.read!(path)) |> Base.encode16(case: :lower)
  end

  @doc """
  Serves `dir` over HTTP on 127.0.0.1 (a free port), each request logged to `log`; returns `{pid, base_url}`.
  Stop it with `stop/1`.
  """
  def serve!(dir, log) do
    # Mix (Elixir 1.15+) keeps only the project's applications in the code path; inets is added back. Called
    # through apply/3: inets is not among the project's applications, which Elixir 1.15+ checks calls against.
    if function_exported?(Mix, :ensure_application!, 1),
      do: apply(Mix, :ensure_application!, [:inets])

    {:ok, _} = Application.ensure_all_started(:inets)

    config = [
      port: 0,
      server_name: ~c"rusty_json_test",
      server_root: String.to_charlist(Path.dirname(log)),
      document_root: String.to_charlist(dir),
      bind_address: {127, 0, 0, 1},
      modules: [:mod_alias, :mod_get, :mod_head, :mod_log],
      transfer_log: String.to_charlist(log)
    ]

    {:ok, pid} = apply(:inets, :start, [:httpd, config])
    {pid, "http://127.0.0.1:#{apply(:httpd, :info, [pid])[:port]}"}
  end

  @doc "Stops a server `serve!/2` started."
  def stop({pid, _base_url}), do: apply(:inets, :stop, [:httpd, pid])

  @doc "How many requests for `name` the server logged in `log`."
  def requests(log, name) do
    case File.read(log) do
      {:ok, text} -> text |> String.split("\n") |> Enum.count(&String.contains?(&1, name))
      {:error, _} -> 0
    end
  end
end
