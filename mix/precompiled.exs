defmodule RustyJson.Precompiled do
  @moduledoc false
  # Precompiled NIFs for `mix compile` (loaded by mix.exs): which artifact the running VM needs (its architecture
  # and libc, and the highest NIF version the checksum file has that the VM loads), where it comes from (a cache
  # under the user's cache directory, else the base URL: https, a `file://` URL or a local directory), and its
  # SHA-256 checked against the checksum file before anything is extracted, cached or installed. Only the library
  # is extracted, from an archive that unpacks to at most @max_unpacked_bytes, and only a shared object for the
  # archive's target is installed. A stamp beside the installed library lets the next compile do nothing.
  #
  # Artifacts are named as the ecosystem's precompiled NIFs are:
  # `librustyjson_nif-v{version}-nif-{nif_version}-{target}.so.tar.gz`, each holding `librustyjson_nif.so`.

  @checksum_file "checksum-Elixir.RustyJson.Native.exs"
  @library "librustyjson_nif.so"
  @attempts 3
  # The most an archive may unpack to: the library is about 1.3 MB (a release build), so this leaves it room to
  # grow fifty-fold while bounding what `mix compile` inflates and holds in memory for one listed archive.
  @max_unpacked_bytes 64 * 1024 * 1024
  # ELF's class (ELFCLASS64: 2, ELFCLASS32: 1) and e_machine for each target's CPU: every precompiled target is
  # Linux (ELF, little-endian).
  @elf_machines %{
    "x86_64" => {2, 62},
    "aarch64" => {2, 183},
    "armv7" => {1, 40},
    "riscv64gc" => {2, 243}
  }

  @doc "The checksum file's name (beside mix.exs)."
  def checksum_file, do: @checksum_file

  @doc "The artifact's file name for `version`, `nif_version` and `target`."
  def artifact_name(version, nif_version, target),
    do: "librustyjson_nif-v#{version}-nif-#{nif_version}-#{target}.so.tar.gz"

  @doc """
  The running VM's target triple (`x86_64-unknown-linux-gnu`, `aarch64-unknown-linux-musl`, ...), or nil where no
  artifact is made (other systems).
  """
  def target do
    arch = :erlang.system_info(:system_architecture) |> List.to_string()

    with [cpu | _] <- String.split(arch, "-"),
         true <- String.contains?(arch, "linux") do
      libc = if String.contains?(arch, "musl") or musl_vm?(), do: "musl", else: "gnu"
      linux_target(normalize_cpu(cpu), libc, arch)
    else
      _ -> nil
    end
  end

  defp linux_target(cpu, libc, _arch) when cpu in ["x86_64", "aarch64"],
    do: "#{cpu}-unknown-linux-#{libc}"

  # 32-bit ARM with hard float (Debian's and Raspberry Pi OS's Erlang say `arm-unknown-linux-gnueabihf` whatever
  # the CPU): the ARMv7 build (scripts/precompile says which boards it covers).
  defp linux_target("arm" <> _, "gnu", arch) do
    if String.ends_with?(arch, "gnueabihf"), do: "armv7-unknown-linux-gnueabihf"
  end

  defp linux_target("riscv64", "gnu", _arch), do: "riscv64gc-unknown-linux-gnu"
  defp linux_target(_cpu, _libc, _arch), do: nil

  defp normalize_cpu("arm64"), do: "aarch64"
  defp normalize_cpu("amd64"), do: "x86_64"
  defp normalize_cpu(cpu), do: cpu

  # Whether the running VM is linked with musl (its triple does not always say): the libraries it has mapped tell,
  # not which loaders the system has installed.
  defp musl_vm? do
    case File.read("/proc/self/maps") do
      {:ok, maps} -> String.contains?(maps, "ld-musl") or String.contains?(maps, "libc.musl")
      {:error, _} -> false
    end
  end

  @doc """
  The artifact for this VM in `checksums` (a map of file name to `"sha256:<hex>"`): `{name, sha256}` of the highest
  NIF version it has for `target` that the VM loads, or nil.
  """
  def pick(checksums, version, target) do
    vm = :erlang.system_info(:nif_version) |> List.to_string() |> parse_version()
    prefix = "librustyjson_nif-v#{version}-nif-"
    suffix = "-#{target}.so.tar.gz"

    checksums
    |> Enum.flat_map(fn {name, sum} ->
      with true <- String.starts_with?(name, prefix) and String.ends_with?(name, suffix),
           nif = name |> String.replace_prefix(prefix, "") |> String.replace_suffix(suffix, ""),
           {:ok, nif_version} <- {:ok, parse_version(nif)},
           true <- nif_version != nil and nif_version <= vm do
        [{nif_version, name, sum}]
      else
        _ -> []
      end
    end)
    |> Enum.max(fn -> nil end)
    |> case do
      nil -> nil
      {_, name, "sha256:" <> hex} -> {name, String.downcase(hex)}
      {_, name, hex} -> {name, String.downcase(hex)}
    end
  end

  defp parse_version(text) do
    case String.split(text, ".") do
      [major, minor] ->
        with {major, ""} <- Integer.parse(major), {minor, ""} <- Integer.parse(minor) do
          {major, minor}
        else
          _ -> nil
        end

      _ ->
        nil
    end
  end

  @doc """
  The checksums in the checksum file at `path` (empty when it is missing): a map of archive name to
  `"sha256:<64 hex digits>"`, written as a literal map of strings. The file is parsed, not run; anything else
  in it raises one `Mix.Error` naming the file and what is wrong.
  """
  def read_checksums(path) do
    case File.read(path) do
      {:ok, text} -> parse_checksums(text, path)
      {:error, :enoent} -> %{}
      {:error, reason} -> malformed!(path, "it cannot be read: #{:file.format_error(reason)}")
    end
  end

  defp parse_checksums(text, path) do
    unless String.valid?(text), do: malformed!(path, "it is not UTF-8 text")

    case Code.string_to_quoted(text, file: path) do
      {:ok, {:%{}, _, pairs}} ->
        Enum.reduce(pairs, %{}, fn pair, acc -> put_checksum(acc, pair, path) end)

      {:ok, {:__block__, _, []}} ->
        malformed!(path, "it is empty; it should be a map of archive names to \"sha256:<hex>\"")

      {:ok, quoted} ->
        malformed!(
          path,
          "it should be a map of archive names to \"sha256:<hex>\", not #{snippet(quoted)}"
        )

      {:error, {location, message, token}} ->
        malformed!(
          path,
          "syntax error on line #{line(location)}: #{syntax_message(message, token)}"
        )
    end
  end

  defp put_checksum(acc, {name, sum}, path) when is_binary(name) and is_binary(sum) do
    cond do
      not Regex.match?(~r/\A(sha256:)?[0-9a-fA-F]{64}\z/, sum) ->
        malformed!(
          path,
          "the checksum of #{inspect(name)} is #{inspect(sum)}, not \"sha256:\" and 64 hex digits"
        )

      Map.has_key?(acc, name) ->
        malformed!(path, "#{inspect(name)} is listed twice")

      true ->
        Map.put(acc, name, sum)
    end
  end

  defp put_checksum(_acc, {name, sum}, path) do
    malformed!(
      path,
      "the entry #{snippet(name)} => #{snippet(sum)} is not a string => string pair"
    )
  end

  defp malformed!(path, what),
    do: Mix.raise("the checksum file #{@checksum_file} (#{path}) is malformed: #{what}")

  defp snippet(quoted) do
    text = Macro.to_string(quoted)
    if String.length(text) > 120, do: String.slice(text, 0, 120) <> "...", else: text
  end

  defp line(location) when is_list(location), do: Keyword.get(location, :line, "?")
  defp line(location), do: location

  # Elixir's parser gives a message and the token it stopped at; some messages come as {prefix, suffix}.
  defp syntax_message({prefix, suffix}, token) when is_binary(prefix) and is_binary(suffix),
    do: prefix <> to_string(token) <> suffix

  defp syntax_message(message, token) when is_binary(message), do: message <> to_string(token)
  defp syntax_message(message, token), do: inspect({message, token})

  @doc """
  Installs the artifact `name` (SHA-256 `sha256`) at `dest`: from the cache, else from `base_url` (then cached),
  and writes a stamp beside it naming the archive, its SHA-256 and the library's. Returns `:noop`, touching
  neither the cache nor the network, when the stamp says this archive is installed and the library still has the
  stamped SHA-256; `:ok` once installed; or `{:error, message}` when it could not be had or was refused (a
  checksum mismatch raises: nothing is used). `max_unpacked_bytes:` caps what the archive may unpack to.
  """
  def install(name, sha256, base_url, cache_dir, dest, opts \\ []) do
    cached = Path.join(cache_dir, name)
    max_unpacked = Keyword.get(opts, :max_unpacked_bytes, @max_unpacked_bytes)

    with false <- installed?(dest, name, sha256),
         {:ok, archive, source} <- cached_or_fetched(cached, name, base_url),
         :ok <- verify!(archive, sha256, name, source),
         :ok <- cache(cached, archive, source),
         {:ok, library} <- extract(archive, name, max_unpacked),
         :ok <- check_shared_object(library, name) do
      _ = write_atomically(dest, library)
      _ = write_atomically(stamp_path(dest), stamp(name, sha256, sha256_hex(library)))
      :ok
    else
      true -> :noop
      {:error, _} = error -> error
    end
  end

  @doc """
  Whether `dest` holds what installing the archive `name` (SHA-256 `sha256`) gives: its stamp names them and the
  library's SHA-256 is the stamped one (a library replaced or damaged since is installed again).
  """
  def installed?(dest, name, sha256) do
    with {:ok, stamp} <- File.read(stamp_path(dest)),
         true <- available?(:crypto),
         {:ok, library} <- File.read(dest) do
      stamp == stamp(name, sha256, sha256_hex(library))
    else
      _ -> false
    end
  end

  @doc "Removes the stamp of `dest` (a library built with cargo is not a precompiled one)."
  def remove_stamp(dest) do
    _ = File.rm(stamp_path(dest))
    :ok
  end

  @doc "The stamp's path beside the library at `dest`."
  def stamp_path(dest), do: dest <> ".stamp"

  defp stamp(name, sha256, library_sha256) do
    """
    # Written by RustyJson's mix compile: the precompiled NIF installed here. Compiles do nothing while it holds.
    archive #{name}
    archive_sha256 #{sha256}
    library_sha256 #{library_sha256}
    """
  end

  defp sha256_hex(bytes), do: :crypto.hash(:sha256, bytes) |> Base.encode16(case: :lower)

  defp cached_or_fetched(cached, name, base_url) do
    case File.read(cached) do
      {:ok, archive} -> {:ok, archive, {:cache, cached}}
      {:error, _} -> fetch(base_url, name)
    end
  end

  @doc "The archive `name` from `base_url`: an https/http URL, a `file://` URL or a local directory."
  def fetch(base_url, name) do
    url = String.trim_trailing(base_url, "/") <> "/" <> name

    cond do
      String.starts_with?(base_url, "file://") ->
        read_local(String.replace_prefix(url, "file://", ""), url)

      String.starts_with?(base_url, ["http://", "https://"]) ->
        http_get(url, @attempts)

      true ->
        read_local(url, url)
    end
  end

  defp read_local(path, url) do
    case File.read(path) do
      {:ok, archive} -> {:ok, archive, {:url, url}}
      {:error, reason} -> {:error, "#{url}: #{:file.format_error(reason)}"}
    end
  end

  defp http_get(url, attempts) do
    for app <- [:inets, :ssl], available?(app), do: {:ok, _} = Application.ensure_all_started(app)
    set_proxies()

    request = {String.to_charlist(url), [{~c"user-agent", ~c"rusty_json mix compile"}]}

    http_options = [
      timeout: 60_000,
      connect_timeout: 15_000,
      ssl: tls_options(url),
      autoredirect: true
    ]

    case :httpc.request(:get, request, http_options, [body_format: :binary], :rusty_json) do
      {:ok, {{_, 200, _}, _headers, body}} ->
        {:ok, body, {:url, url}}

      {:ok, {{_, status, _}, _headers, _body}} when status in 400..499 ->
        {:error, "#{url}: HTTP #{status}"}

      other when attempts > 1 ->
        Process.sleep(500 * (@attempts - attempts + 1))
        _ = other
        http_get(url, attempts - 1)

      {:ok, {{_, status, _}, _, _}} ->
        {:error, "#{url}: HTTP #{status}"}

      {:error, reason} ->
        {:error, "#{url}: #{inspect(reason)}"}
    end
  end

  # TLS peers are verified against the operating system's CA store, and the host name checked.
  defp tls_options(url) do
    host = url |> URI.parse() |> Map.get(:host, "") |> String.to_charlist()

    [
      verify: :verify_peer,
      cacerts: :public_key.cacerts_get(),
      server_name_indication: host,
      customize_hostname_check: [match_fun: :public_key.pkix_verify_hostname_match_fun(:https)],
      depth: 4
    ]
  end

  defp set_proxies do
    _ = :inets.start(:httpc, profile: :rusty_json)

    for {var, key} <- [{"HTTP_PROXY", :proxy}, {"HTTPS_PROXY", :https_proxy}],
        value = System.get_env(var) || System.get_env(String.downcase(var)),
        value not in [nil, ""],
        %URI{host: host, port: port} when is_binary(host) <- [URI.parse(value)] do
      :httpc.set_options([{key, {{String.to_charlist(host), port}, no_proxy()}}], :rusty_json)
    end

    :ok
  end

  defp no_proxy do
    (System.get_env("NO_PROXY") || System.get_env("no_proxy") || "")
    |> String.split(",", trim: true)
    |> Enum.map(&(&1 |> String.trim() |> String.to_charlist()))
  end

  # Mix (Elixir 1.15+) keeps only the project's own applications in the code path while it compiles: OTP's
  # crypto, inets and ssl are added back when the VM has them.
  defp available?(app) do
    if function_exported?(Mix, :ensure_application!, 1) do
      try do
        apply(Mix, :ensure_application!, [app])
      rescue
        _ -> :missing
      end
    end

    Code.ensure_loaded?(app) or match?({:ok, _}, :application.get_all_key(app))
  end

  defp verify!(archive, expected, name, source) do
    unless available?(:crypto) do
      Mix.raise(
        "verifying the precompiled RustyJson NIF #{name} needs OTP's crypto application (Debian: erlang-crypto); " <>
          "install it, or build from source with RUSTYJSON_BUILD=1"
      )
    end

    actual = sha256_hex(archive)

    if actual == expected do
      :ok
    else
      Mix.raise("""
      the precompiled RustyJson NIF #{name} from #{describe(source)} does not match the checksum file:
        expected sha256:#{expected}
        got      sha256:#{actual}
      Nothing was installed. Remove the file if it is a bad cached copy, check the base URL, or build from source \
      with RUSTYJSON_BUILD=1.\
      """)
    end
  end

  defp describe({:cache, path}), do: "the cache (#{path})"
  defp describe({:url, url}), do: url

  defp cache(_cached, _archive, {:cache, _}), do: :ok

  defp cache(cached, archive, _source) do
    _ = write_atomically(cached, archive)
    :ok
  end

  # The library alone, from the archive unpacked in memory up to `max` bytes (an archive that unpacks to more is
  # refused before it is all inflated).
  defp extract(archive, name, max) do
    with {:ok, tar} <- gunzip(archive, name, max),
         {:ok, entries} <- table(tar, name),
         {:ok, path} <- library_entry(entries, name) do
      case :erl_tar.extract({:binary, tar}, [:memory, {:files, [path]}]) do
        {:ok, [{_, library}]} -> {:ok, library}
        other -> {:error, "#{name}: its #{@library} could not be extracted: #{inspect(other)}"}
      end
    end
  end

  defp gunzip(archive, name, max) do
    z = :zlib.open()

    try do
      # 31: a gzip header and trailer around the deflate stream.
      :ok = :zlib.inflateInit(z, 31)
      inflate(z, :zlib.safeInflate(z, archive), [], 0, max, name)
    rescue
      e in ErlangError ->
        {:error, "#{name} is not a gzipped tar archive: #{inspect(e.original)}"}
    after
      :zlib.close(z)
    end
  end

  # safeInflate gives the output a piece at a time: the size is checked before the next piece is inflated.
  defp inflate(z, {state, piece}, acc, size, max, name) when state in [:continue, :finished] do
    size = size + IO.iodata_length(piece)

    cond do
      size > max ->
        {:error,
         "#{name} unpacks to more than #{format_bytes(max)}, the most a precompiled NIF archive may hold"}

      state == :continue ->
        inflate(z, :zlib.safeInflate(z, []), [acc | piece], size, max, name)

      true ->
        # :finished means the input is used up; inflateEnd raises data_error when the stream was cut short.
        :ok = :zlib.inflateEnd(z)
        {:ok, IO.iodata_to_binary([acc | piece])}
    end
  end

  defp inflate(_z, other, _acc, _size, _max, name),
    do: {:error, "#{name} is not a gzipped tar archive: #{inspect(elem(other, 0))}"}

  defp format_bytes(bytes) when rem(bytes, 1024 * 1024) == 0, do: "#{div(bytes, 1024 * 1024)} MiB"
  defp format_bytes(bytes), do: "#{bytes} bytes"

  defp table(tar, name) do
    case :erl_tar.table({:binary, tar}, [:verbose]) do
      {:ok, entries} -> {:ok, entries}
      {:error, reason} -> {:error, "#{name} is not a gzipped tar archive: #{inspect(reason)}"}
    end
  end

  # The first entry named like the library, which must be a regular file (not a link or a directory).
  defp library_entry(entries, name) do
    case Enum.find(entries, fn entry -> Path.basename(to_string(elem(entry, 0))) == @library end) do
      nil ->
        {:error, "#{name} holds no #{@library}"}

      entry when elem(entry, 1) == :regular ->
        {:ok, elem(entry, 0)}

      entry ->
        {:error, "#{name}: its #{elem(entry, 0)} is a #{elem(entry, 1)}, not a regular file"}
    end
  end

  # The library must be a shared object for the archive's target (named in the archive's name): a 32- or 64-bit
  # little-endian ELF of type ET_DYN (3) for the target's CPU. Only Linux targets are made; another system's
  # target needs its own header check here.
  defp check_shared_object(library, name) do
    with {:ok, cpu, elf} <- archive_machine(name),
         :ok <- check_elf(library, cpu, elf) do
      :ok
    else
      {:error, what} ->
        {:error,
         "#{name} holds a #{@library} that is not a shared object for its target: #{what}"}
    end
  end

  defp archive_machine(name) do
    with [_, target] <- Regex.run(~r/-nif-\d+\.\d+-(.+)\.so\.tar\.gz\z/, name),
         [cpu | _] <- String.split(target, "-"),
         {:ok, elf} <- Map.fetch(@elf_machines, cpu) do
      {:ok, cpu, elf}
    else
      _ -> {:error, "the archive's name names no target this check knows"}
    end
  end

  defp check_elf(
         <<0x7F, "ELF", class, 1, _::binary-size(10), type::little-16, found::little-16, _::binary>>,
         cpu,
         {class, machine}
       ) do
    cond do
      type != 3 ->
        {:error, "its ELF type is #{type}, not a shared object's (ET_DYN, 3)"}

      found != machine ->
        {:error, "it is built for ELF machine #{machine_name(found)}, not #{cpu} (#{machine})"}

      true ->
        :ok
    end
  end

  defp check_elf(<<0x7F, "ELF", class, data, _::binary-size(14), _::binary>>, _cpu, {want, _}),
    do:
      {:error,
       "it is not a #{32 * want}-bit little-endian ELF file (class #{class}, data encoding #{data})"}

  defp check_elf(<<0x7F, "ELF", _::binary>>, _cpu, _elf),
    do: {:error, "its ELF header is cut short"}

  defp check_elf(library, _cpu, _elf) do
    {:error,
     "it is not an ELF file (it begins #{inspect(binary_part(library, 0, min(byte_size(library), 8)))})"}
  end

  defp machine_name(machine) do
    case Enum.find(@elf_machines, fn {_, {_, number}} -> number == machine end) do
      {cpu, _} -> "#{machine} (#{cpu})"
      nil -> "#{machine}"
    end
  end

  @doc """
  Writes `bytes` at `dest` (a library or an archive): `:noop` when it already holds them, else written beside and
  renamed, as a loaded library must never be overwritten in place.
  """
  def write_atomically(dest, bytes) do
    if File.read(dest) == {:ok, bytes} do
      :noop
    else
      File.mkdir_p!(Path.dirname(dest))
      tmp = dest <> ".tmp#{System.unique_integer([:positive])}"
      File.write!(tmp, bytes)
      File.rename!(tmp, dest)
      :ok
    end
  end
end
